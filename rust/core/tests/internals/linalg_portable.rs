//! Tests of `prims::linalg::portable`'s internals (reached through `microjax::internals`).

use microjax::internals::prims_linalg_portable::*;
use microjax::Result;

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn lu_matches_lapack_pivoting() {
    let a = Mat::from_slice(3, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0]);
    let (f, piv, perm) = lu(&a);
    assert_eq!(piv, vec![2, 2, 2]);
    assert_eq!(perm, vec![2, 0, 1]);
    assert!((f.at(0, 0) - 7.0).abs() < 1e-12);
}

#[test]
fn svd_of_rank_deficient_completes_u() -> Result<()> {
    let a = Mat::from_slice(3, 2, &[1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
    let (s, u, vt) = svd(&a, true, true)?;
    assert!(close(&s, &[2.0, 0.0], 1e-12));
    let utu: Vec<f64> = (0..3)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| u.col_dot(i, j))
        .collect();
    assert!(close(&utu, &Mat::eye(3, 3)?.d, 1e-12));
    assert_eq!((vt.r, vt.c), (2, 2));
    Ok(())
}
