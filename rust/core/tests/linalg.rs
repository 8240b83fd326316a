//! `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh`, `svd`: decomposition
//! identities of the kernels (batched, f32 and f64), LAPACK/JAX conventions
//! (pivots, NaN factor of a non-PD matrix), shape errors, JVPs against
//! central differences, the transpose of `triangular_solve` against its
//! adjoint identity, and batching against a per-example loop.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use microjax::exec::interp::eval_closed;
use microjax::prims::linalg::LinalgOp;
use microjax::transforms::batch::batch_jaxpr;
use microjax::transforms::{jvp_jaxpr, transpose_jaxpr};
use microjax::{Atom, Aval, Buffer, ClosedJaxpr, DType, Error, HostArray, Primitive};
use std::sync::Arc;

use crate::common;
use common::{arc, build, eval, f64v, host, i32s};

fn run(op: LinalgOp, args: &[HostArray]) -> Vec<HostArray> {
    let refs: Vec<&HostArray> = args.iter().collect();
    eval(&Primitive::Linalg(op), &refs).unwrap()
}

/// `op` on the `m x n` f64 matrix `a`.
fn run_on(op: LinalgOp, (m, n): (usize, usize), a: &[f64]) -> Vec<HostArray> {
    run(op, &[host(&[m, n], a.to_vec())])
}

fn f64s(a: &HostArray) -> Vec<f64> {
    match a.buffer() {
        Buffer::F64(v) => v.to_vec(),
        Buffer::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        other => panic!("expected a float, got {:?}", other.dtype()),
    }
}

/// Row-major `a (m x k) @ b (k x n)`.
fn matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    out
}

fn transpose(a: &[f64], m: usize, n: usize) -> Vec<f64> {
    (0..n)
        .flat_map(|j| (0..m).map(move |i| a[i * n + j]))
        .collect()
}

fn eye(n: usize) -> Vec<f64> {
    (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{got:?}\n  vs {want:?}");
    }
}

/// `q` (`rows` x `cols`) has orthonormal columns: `q^T q = I`.
fn assert_orthonormal_columns(q: &[f64], rows: usize, cols: usize) {
    let qtq = matmul(&transpose(q, rows, cols), q, cols, rows, cols);
    assert_close(&qtq, &eye(cols), 1e-12);
}

/// One factorization of a sample matrix: `(m, n, full, a, outs)` with
/// `a` the `m x n` matrix, `full` the `full_matrices` flag it ran with and
/// `outs` what the op returned.
type Factorized = (usize, usize, bool, Vec<f64>, Vec<HostArray>);

/// `op(full_matrices)` of `sample(m, n, seed)` for each shape, both ways.
fn factorizations(
    shapes: [(usize, usize); 3], seed: u32, op: fn(bool) -> LinalgOp,
) -> Vec<Factorized> {
    let mut done = Vec::new();
    for (m, n) in shapes {
        for full in [true, false] {
            let a = sample(m, n, seed);
            let outs = run_on(op(full), (m, n), &a);
            done.push((m, n, full, a, outs));
        }
    }
    done
}

/// A deterministic well-conditioned test matrix (diagonally dominant).
fn sample(m: usize, n: usize, seed: u32) -> Vec<f64> {
    (0..m * n)
        .map(|i| {
            let x = ((i as u32)
                .wrapping_mul(2654435761u32)
                .wrapping_add(seed.wrapping_mul(40503))
                >> 8) as f64;
            let v = (x / 16777216.0) - 0.5;
            if i / n == i % n {
                v + 3.0
            } else {
                v
            }
        })
        .collect()
}

fn spd(n: usize, seed: u32) -> Vec<f64> {
    let a = sample(n, n, seed);
    let mut s = matmul(&a, &transpose(&a, n, n), n, n, n);
    for i in 0..n {
        s[i * n + i] += 1.0;
    }
    s
}

const CHOL: LinalgOp = LinalgOp::Cholesky;

fn ts(left_side: bool, lower: bool, transpose_a: bool, unit_diagonal: bool) -> LinalgOp {
    LinalgOp::TriangularSolve {
        left_side,
        lower,
        transpose_a,
        conjugate_a: false,
        unit_diagonal,
    }
}

#[test]
fn cholesky_factors_and_nans_on_non_pd() {
    let a = spd(4, 1);
    for dt in [DType::F64, DType::F32] {
        let x = if dt == DType::F64 {
            host(&[4, 4], a.clone())
        } else {
            host(&[4, 4], a.iter().map(|&v| v as f32).collect::<Vec<_>>())
        };
        let l = f64s(&run(CHOL, &[x])[0]);
        for i in 0..4 {
            for j in i + 1..4 {
                assert_eq!(l[i * 4 + j], 0.0);
            }
        }
        let tol = if dt == DType::F64 { 1e-12 } else { 1e-4 };
        assert_close(&matmul(&l, &transpose(&l, 4, 4), 4, 4, 4), &a, tol);
    }
    // Only the lower triangle is read.
    let mut junk = a.clone();
    junk[1] = 1e9;
    assert_eq!(
        f64s(&run(CHOL, &[host(&[4, 4], junk)])[0]),
        f64s(&run(CHOL, &[host(&[4, 4], a)])[0])
    );
    let l = f64s(&run(CHOL, &[host(&[2, 2], vec![1.0, 2.0, 2.0, 1.0])])[0]);
    assert!(l.iter().all(|v| v.is_nan()));
}

#[test]
fn triangular_solve_every_flag_combination() {
    let a = sample(3, 3, 7);
    for left in [true, false] {
        for lower in [true, false] {
            for trans in [true, false] {
                for unit in [true, false] {
                    let (bs, (bm, bn)) = if left {
                        (sample(3, 2, 3), (3, 2))
                    } else {
                        (sample(2, 3, 3), (2, 3))
                    };
                    let x = f64s(
                        &run(
                            ts(left, lower, trans, unit),
                            &[host(&[3, 3], a.clone()), host(&[bm, bn], bs.clone())],
                        )[0],
                    );
                    // Explicit op(a) from the read triangle.
                    let mut t = vec![0.0; 9];
                    for i in 0..3 {
                        for j in 0..3 {
                            let inside = if lower { j <= i } else { j >= i };
                            t[i * 3 + j] = if i == j && unit {
                                1.0
                            } else if inside {
                                a[i * 3 + j]
                            } else {
                                0.0
                            };
                        }
                    }
                    if trans {
                        t = transpose(&t, 3, 3);
                    }
                    let back = if left {
                        matmul(&t, &x, 3, 3, 2)
                    } else {
                        matmul(&x, &t, 2, 3, 3)
                    };
                    assert_close(&back, &bs, 1e-12);
                }
            }
        }
    }
}

#[test]
fn lu_follows_getrf_and_reconstructs() {
    let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0];
    let outs = run(LinalgOp::Lu, &[host(&[3, 3], a.clone())]);
    assert_eq!(i32s(&outs[1]), vec![2, 2, 2]);
    assert_eq!(i32s(&outs[2]), vec![2, 0, 1]);
    // Rectangular and batched: P A = L U.
    for (m, n) in [(4, 3), (3, 4)] {
        let a = [sample(m, n, 1), sample(m, n, 2)].concat();
        let outs = run(LinalgOp::Lu, &[host(&[2, m, n], a.clone())]);
        let (f, perm) = (f64s(&outs[0]), i32s(&outs[2]));
        assert_eq!(outs[1].shape(), &[2, m.min(n)]);
        let k = m.min(n);
        for bi in 0..2 {
            let fb = &f[bi * m * n..(bi + 1) * m * n];
            let l: Vec<f64> = (0..m * k)
                .map(|i| {
                    let (r, c) = (i / k, i % k);
                    match r.cmp(&c) {
                        std::cmp::Ordering::Greater => fb[r * n + c],
                        std::cmp::Ordering::Equal => 1.0,
                        std::cmp::Ordering::Less => 0.0,
                    }
                })
                .collect();
            let u: Vec<f64> = (0..k * n)
                .map(|i| {
                    let (r, c) = (i / n, i % n);
                    if c >= r {
                        fb[r * n + c]
                    } else {
                        0.0
                    }
                })
                .collect();
            let pa: Vec<f64> = (0..m)
                .flat_map(|r| {
                    let src = perm[bi * m + r] as usize;
                    a[bi * m * n + src * n..bi * m * n + (src + 1) * n].to_vec()
                })
                .collect();
            assert_close(&matmul(&l, &u, m, k, n), &pa, 1e-12);
        }
    }
}

#[test]
fn qr_reconstructs_with_orthonormal_q() {
    let qr = |full| LinalgOp::Qr {
        full_matrices: full,
    };
    for (m, n, full, a, outs) in factorizations([(4, 3), (3, 4), (3, 3)], 5, qr) {
        let k = if full { m } else { m.min(n) };
        assert_eq!(outs[0].shape(), &[m, k]);
        assert_eq!(outs[1].shape(), &[k, n]);
        let (q, r) = (f64s(&outs[0]), f64s(&outs[1]));
        assert_close(&matmul(&q, &r, m, k, n), &a, 1e-12);
        assert_orthonormal_columns(&q, m, k);
        for i in 0..k {
            for j in 0..i.min(n) {
                assert_eq!(r[i * n + j], 0.0);
            }
        }
    }
}

#[test]
fn eigh_sorted_and_reconstructs() {
    let a = spd(4, 3);
    let outs = run(
        LinalgOp::Eigh {
            lower: true,
            sort_eigenvalues: true,
        },
        &[host(&[4, 4], a.clone())],
    );
    let (v, w) = (f64s(&outs[0]), f64s(&outs[1]));
    assert!(w.windows(2).all(|p| p[0] <= p[1]));
    let vw: Vec<f64> = (0..16).map(|i| v[i] * w[i % 4]).collect();
    assert_close(&matmul(&vw, &transpose(&v, 4, 4), 4, 4, 4), &a, 1e-12);
    assert_orthonormal_columns(&v, 4, 4);
    // Upper triangle read with lower=False.
    let upper = run(
        LinalgOp::Eigh {
            lower: false,
            sort_eigenvalues: true,
        },
        &[host(&[4, 4], a)],
    );
    assert_close(&f64s(&upper[1]), &w, 1e-10);
}

#[test]
fn svd_reconstructs_every_shape() {
    let svd = |full| LinalgOp::Svd {
        full_matrices: full,
        compute_uv: true,
    };
    for (m, n, full, a, outs) in factorizations([(4, 2), (2, 4), (3, 3)], 9, svd) {
        let k = m.min(n);
        let (s, u, vt) = (f64s(&outs[0]), f64s(&outs[1]), f64s(&outs[2]));
        let (uc, vr) = if full { (m, n) } else { (k, k) };
        assert_eq!(outs[1].shape(), &[m, uc]);
        assert_eq!(outs[2].shape(), &[vr, n]);
        assert!(s.windows(2).all(|p| p[0] >= p[1]));
        assert_orthonormal_columns(&u, m, uc);
        // Orthonormal rows: vt^T has orthonormal columns.
        assert_orthonormal_columns(&transpose(&vt, vr, n), n, vr);
        let us: Vec<f64> = (0..m * k)
            .map(|i| u[(i / k) * uc + i % k] * s[i % k])
            .collect();
        assert_close(&matmul(&us, &vt[..k * n], m, k, n), &a, 1e-12);
        let only_s = run_on(
            LinalgOp::Svd {
                full_matrices: full,
                compute_uv: false,
            },
            (m, n),
            &a,
        );
        assert_eq!(only_s.len(), 1);
        assert_close(&f64s(&only_s[0]), &s, 0.0);
    }
}

#[test]
fn shape_and_dtype_errors() {
    let ae = |op: LinalgOp, ins: &[Aval]| {
        microjax::prims::shape::abstract_eval(&Primitive::Linalg(op), ins)
    };
    let f = |s: &[usize]| Aval::new(s.to_vec(), DType::F32);
    assert!(matches!(ae(CHOL, &[f(&[2, 3])]), Err(Error::Shape { .. })));
    assert!(matches!(ae(CHOL, &[f(&[3])]), Err(Error::Shape { .. })));
    assert!(matches!(
        ae(CHOL, &[Aval::new(vec![2, 2], DType::I32)]),
        Err(Error::DType { .. })
    ));
    let solve = ts(true, true, false, false);
    assert!(matches!(
        ae(solve, &[f(&[3, 3]), f(&[2, 2])]),
        Err(Error::Shape { .. })
    ));
    assert!(matches!(
        ae(solve, &[f(&[2, 3, 3]), f(&[3, 3])]),
        Err(Error::Shape { .. })
    ));
    let msg = ae(CHOL, &[f(&[2, 3])]).unwrap_err().to_string();
    assert!(msg.contains("cholesky") && msg.contains("(2, 3)"), "{msg}");
}

// ------------------------------------------------------------- AD rules

/// A program applying `op` to its inputs and returning outputs `keep`.
fn single(op: LinalgOp, ins: &[Aval], keep: &[usize]) -> ClosedJaxpr {
    build(ins, |b, xs| {
        let outs: Vec<Atom> = b
            .add_eqn(Primitive::Linalg(op), xs.to_vec(), None)
            .unwrap()
            .into_iter()
            .map(Atom::Var)
            .collect();
        keep.iter().map(|&i| outs[i].clone()).collect()
    })
}

/// JVP outputs against central differences along `t` (f64).
fn check_jvp(f: &ClosedJaxpr, xs: &[(Vec<usize>, Vec<f64>)], ts: &[Vec<f64>], tol: f64) {
    let (jf, _) = jvp_jaxpr(f, &vec![true; xs.len()], true).unwrap();
    let mut args: Vec<Arc<HostArray>> = xs.iter().map(|(s, x)| arc(host(s, x.clone()))).collect();
    args.extend(xs.iter().zip(ts).map(|((s, _), t)| arc(host(s, t.clone()))));
    let outs = eval_closed(&jf, &args).unwrap();
    let nout = outs.len() / 2;
    let h = 1e-6;
    let shifted = |sign: f64| {
        let a: Vec<Arc<HostArray>> = xs
            .iter()
            .zip(ts)
            .map(|((s, x), t)| {
                arc(host(
                    s,
                    x.iter()
                        .zip(t)
                        .map(|(x, t)| x + sign * h * t)
                        .collect::<Vec<_>>(),
                ))
            })
            .collect();
        eval_closed(f, &a).unwrap()
    };
    let (plus, minus) = (shifted(1.0), shifted(-1.0));
    for k in 0..nout {
        let fd: Vec<f64> = f64s(&plus[k])
            .iter()
            .zip(f64s(&minus[k]))
            .map(|(p, m)| (p - m) / (2.0 * h))
            .collect();
        assert_close(&f64s(&outs[nout + k]), &fd, tol);
    }
}

/// [`check_jvp`] of `op` on one `m x n` sample matrix and sample tangent,
/// for the outputs `keep`.
fn check_sample_jvp(op: LinalgOp, (m, n): (usize, usize), keep: &[usize]) {
    check_jvp(
        &single(op, &[f64v(&[m, n])], keep),
        &[(vec![m, n], sample(m, n, 6))],
        &[sample(m, n, 7)],
        1e-6,
    );
}

#[test]
fn jvps_match_finite_differences() {
    let a = spd(3, 2);
    let t = sample(3, 3, 11);
    // The Cholesky JVP assumes a symmetric tangent (the input symmetrized).
    let tsym: Vec<f64> = (0..9).map(|i| t[i] + t[(i % 3) * 3 + i / 3]).collect();
    check_jvp(
        &single(CHOL, &[f64v(&[3, 3])], &[0]),
        &[(vec![3, 3], a.clone())],
        std::slice::from_ref(&tsym),
        1e-6,
    );
    check_jvp(
        &single(
            LinalgOp::Eigh {
                lower: true,
                sort_eigenvalues: true,
            },
            &[f64v(&[3, 3])],
            &[1],
        ),
        &[(vec![3, 3], a)],
        &[tsym],
        1e-6,
    );
    for (left, lower, trans, unit) in [
        (true, true, false, false),
        (false, false, true, true),
        (true, false, true, false),
        (false, true, false, true),
    ] {
        let bshape = if left { vec![2, 3, 2] } else { vec![2, 2, 3] };
        check_jvp(
            &single(
                ts(left, lower, trans, unit),
                &[f64v(&[2, 3, 3]), f64v(&bshape)],
                &[0],
            ),
            &[
                (vec![2, 3, 3], [sample(3, 3, 1), sample(3, 3, 2)].concat()),
                (bshape, sample(2, 6, 3)),
            ],
            &[sample(2, 9, 4), sample(2, 6, 5)],
            1e-6,
        );
    }
    let svd_values = LinalgOp::Svd {
        full_matrices: false,
        compute_uv: false,
    };
    for (m, n) in [(3, 3), (4, 3), (3, 4)] {
        check_sample_jvp(LinalgOp::Lu, (m, n), &[0]);
        check_sample_jvp(svd_values, (m, n), &[0]);
    }
    let reduced_qr = LinalgOp::Qr {
        full_matrices: false,
    };
    check_sample_jvp(reduced_qr, (4, 3), &[0, 1]);
}

#[test]
fn unsupported_jvps_are_not_implemented() {
    // (op, operand shape): wide reduced QR, full SVD of a tall matrix.
    let cases = [
        (
            LinalgOp::Qr {
                full_matrices: false,
            },
            [2, 3],
        ),
        (
            LinalgOp::Svd {
                full_matrices: true,
                compute_uv: true,
            },
            [3, 2],
        ),
    ];
    for (op, shape) in cases {
        let f = single(op, &[f64v(&shape)], &[0]);
        assert!(
            matches!(jvp_jaxpr(&f, &[true], true), Err(Error::NotImplemented(_))),
            "{op:?}"
        );
    }
}

#[test]
fn triangular_solve_transpose_is_its_adjoint() {
    for (left, lower, trans, unit) in [(true, true, false, false), (false, false, true, true)] {
        let bshape = if left { vec![3, 2] } else { vec![2, 3] };
        let f = single(
            ts(left, lower, trans, unit),
            &[f64v(&[3, 3]), f64v(&bshape)],
            &[0],
        );
        let a = sample(3, 3, 1);
        let (x, ct) = (sample(3, 2, 2), sample(3, 2, 3));
        let fx = f64s(
            &eval_closed(
                &f,
                &[arc(host(&[3, 3], a.clone())), arc(host(&bshape, x.clone()))],
            )
            .unwrap()[0],
        );
        let t = transpose_jaxpr(&f, &[false, true]).unwrap();
        let out =
            eval_closed(&t, &[arc(host(&[3, 3], a)), arc(host(&bshape, ct.clone()))]).unwrap();
        let ftct = f64s(out.last().unwrap());
        let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
        assert!((dot(&ct, &fx) - dot(&ftct, &x)).abs() < 1e-10);
    }
}

#[test]
fn batched_ops_match_per_example() {
    let cases: Vec<(LinalgOp, Vec<usize>)> = vec![
        (CHOL, vec![3, 3]),
        (LinalgOp::Lu, vec![3, 2]),
        (
            LinalgOp::Qr {
                full_matrices: true,
            },
            vec![3, 2],
        ),
        (
            LinalgOp::Eigh {
                lower: true,
                sort_eigenvalues: true,
            },
            vec![3, 3],
        ),
        (
            LinalgOp::Svd {
                full_matrices: false,
                compute_uv: true,
            },
            vec![2, 3],
        ),
    ];
    for (op, shape) in cases {
        let n: usize = shape.iter().product();
        let xs = [spd(3, 1)[..n].to_vec(), spd(3, 4)[..n].to_vec()];
        let nout = op_outputs(op);
        let f = single(op, &[f64v(&shape)], &(0..nout).collect::<Vec<_>>());
        // Batched along the last axis.
        let stacked: Vec<f64> = (0..n).flat_map(|i| [xs[0][i], xs[1][i]]).collect();
        let mut bshape = shape.clone();
        bshape.push(2);
        let bj = batch_jaxpr(&f, &[Some(shape.len())], 2, &vec![Some(0); nout]).unwrap();
        let got = eval_closed(&bj, &[arc(host(&bshape, stacked))]).unwrap();
        for (e, x) in xs.iter().enumerate() {
            let want = eval_closed(&f, &[arc(host(&shape, x.clone()))]).unwrap();
            for (g, w) in got.iter().zip(&want) {
                let size = w.size();
                match (g.buffer(), w.buffer()) {
                    (Buffer::F64(g), Buffer::F64(w)) => {
                        assert_eq!(&g[e * size..(e + 1) * size], &w[..])
                    }
                    (Buffer::I32(g), Buffer::I32(w)) => {
                        assert_eq!(&g[e * size..(e + 1) * size], &w[..])
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}

fn op_outputs(op: LinalgOp) -> usize {
    match op {
        LinalgOp::Cholesky | LinalgOp::TriangularSolve { .. } => 1,
        LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Hessenberg => 2,
        LinalgOp::Lu | LinalgOp::Svd { .. } => 3,
        LinalgOp::Schur {
            compute_schur_vectors,
        } => 1 + usize::from(compute_schur_vectors),
        LinalgOp::Eig { left, right, .. } => 1 + usize::from(left) + usize::from(right),
    }
}

#[test]
fn non_finite_and_empty_inputs_give_values_not_errors() {
    let ops = [
        CHOL,
        LinalgOp::Lu,
        LinalgOp::Qr {
            full_matrices: true,
        },
        LinalgOp::Eigh {
            lower: true,
            sort_eigenvalues: true,
        },
        LinalgOp::Svd {
            full_matrices: true,
            compute_uv: true,
        },
    ];
    for op in ops {
        let square = matches!(op, LinalgOp::Cholesky | LinalgOp::Eigh { .. });
        for v in [f64::NAN, f64::INFINITY] {
            let outs = run(op, &[host(&[3, 3], vec![v; 9])]);
            assert!(!outs.is_empty());
        }
        // One NaN pair in an otherwise finite matrix: NaNs in the first
        // output (no error, no hang) where faer would skip the column.
        if !matches!(op, LinalgOp::Cholesky | LinalgOp::Lu) {
            let a = vec![4.0, f64::NAN, 0.0, f64::NAN, 3.0, 1.0, 0.0, 1.0, 2.0];
            let outs = run(op, &[host(&[3, 3], a)]);
            let first = outs.first().map(f64s).unwrap_or_default();
            assert!(first.iter().any(|x| x.is_nan()), "{op:?}: {first:?}");
        }
        let shapes: &[&[usize]] = if square {
            &[&[0, 0], &[0, 2, 2], &[2, 0, 0]]
        } else {
            &[&[0, 0], &[0, 3], &[3, 0], &[0, 2, 3]]
        };
        for &shape in shapes {
            let aval = Aval::new(shape.to_vec(), DType::F32);
            let want =
                microjax::prims::shape::abstract_eval(&Primitive::Linalg(op), &[aval]).unwrap();
            let outs = run(op, &[host(shape, Vec::<f32>::new())]);
            let got: Vec<&[usize]> = outs.iter().map(|o| o.shape()).collect();
            let want: Vec<&[usize]> = want.iter().map(|a| a.shape.as_slice()).collect();
            assert_eq!(got, want, "{op:?} {shape:?}");
        }
    }
    // A singular triangular system gives infinities, as LAPACK's trsm.
    let x = run(
        ts(true, true, false, false),
        &[
            host(&[2, 2], vec![0.0, 0.0, 1.0, 1.0]),
            host(&[2, 1], vec![1.0, 1.0]),
        ],
    );
    assert!(f64s(&x[0])[0].is_infinite());
}
