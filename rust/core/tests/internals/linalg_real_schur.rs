//! Tests of `prims::linalg::real_schur`'s internals (reached through `microjax::internals`).

use super::uniform_values;
use microjax::internals::prims_linalg_lapack::Mat;
use microjax::internals::prims_linalg_real_schur::*;
use microjax::Result;

fn matmul(a: &Mat<f64>, b: &Mat<f64>, bt: bool) -> Mat<f64> {
    let n = a.r;
    let mut out = Mat::from_rows(n, n, vec![0.0; n * n]);
    for i in 0..n {
        for j in 0..n {
            let s = (0..n)
                .map(|k| a.at(i, k) * if bt { b.at(j, k) } else { b.at(k, j) })
                .sum();
            out.set(i, j, s);
        }
    }
    out
}

fn check(a: &Mat<f64>) -> Result<Mat<f64>> {
    let n = a.r;
    let (t, z) = real_schur(a)?;
    let back = matmul(&matmul(&z, &t, false), &z, true);
    let ztz = matmul(&z, &z, true);
    for i in 0..n {
        for j in 0..n {
            assert!((back.at(i, j) - a.at(i, j)).abs() < 1e-12, "a[{i},{j}]");
            let e = if i == j { 1.0 } else { 0.0 };
            assert!((ztz.at(i, j) - e).abs() < 1e-12);
            if i > j + 1 {
                assert_eq!(t.at(i, j), 0.0);
            }
        }
    }
    for i in 1..n {
        if t.at(i, i - 1) != 0.0 {
            // a standardized block, not followed by another subdiagonal
            assert_eq!(t.at(i - 1, i - 1), t.at(i, i));
            assert!(t.at(i - 1, i) * t.at(i, i - 1) < 0.0);
            assert!(i + 1 >= n || t.at(i + 1, i) == 0.0);
        }
    }
    Ok(t)
}

#[test]
fn real_schur_matches_lapack_on_a_recorded_matrix() -> Result<()> {
    // recorded from JAX 0.10.2 (LAPACK dgees) on this matrix
    let a = Mat::from_rows(3, 3, vec![1., 2., 3., -4., 5., 6., 7., -8., 9.]);
    let t = check(&a)?;
    let want = [
        5.999999999999987,
        -8.111233230445404,
        -1.306331781615214,
        0.0,
        4.500000000000005,
        11.754935318243644,
        0.0,
        -1.680145357273727,
        4.500000000000005,
    ];
    for (x, w) in t.d.iter().zip(want) {
        assert!((x - w).abs() < 1e-12, "{x} vs {w}");
    }
    Ok(())
}

#[test]
fn real_schur_of_random_and_structured_matrices() -> Result<()> {
    let mut next = uniform_values(7u64);
    for n in [1usize, 2, 3, 5, 8, 13] {
        let d: Vec<f64> = (0..n * n).map(|_| next()).collect();
        check(&Mat::from_rows(n, n, d))?;
    }
    // a rotation (pure imaginary pair), a triangular and a zero matrix
    check(&Mat::from_rows(2, 2, vec![0., -1., 1., 0.]))?;
    check(&Mat::from_rows(
        3,
        3,
        vec![1., 2., 3., 0., 4., 5., 0., 0., 6.],
    ))?;
    check(&Mat::from_rows(3, 3, vec![0.; 9]))?;
    let (t, _) = real_schur(&Mat::from_rows(2, 2, vec![1., f64::NAN, 0., 1.]))?;
    assert!(t.d.iter().all(|x| x.is_nan()));
    Ok(())
}
