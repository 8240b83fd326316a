//! Tests of `prims::linalg::lapack`'s internals (reached through `microjax::internals`).

use super::uniform_values;
use microjax::internals::prims_linalg_lapack::*;
use microjax::Result;
use num_complex::Complex;
use num_traits::Zero;

type C = Complex<f64>;

fn mat(r: usize, c: usize, seed: u64) -> Mat<C> {
    let mut next = uniform_values(seed);
    let d = (0..r * c).map(|_| C::new(next(), next())).collect();
    Mat::from_rows(r, c, d)
}

fn matmul(a: &Mat<C>, b: &Mat<C>) -> Mat<C> {
    let mut out = Mat::zeros(a.r, b.c).unwrap_or_else(|_| Mat::from_rows(0, 0, vec![]));
    for i in 0..a.r {
        for j in 0..b.c {
            let s = (0..a.c).fold(C::zero(), |s, k| s + a.at(i, k) * b.at(k, j));
            out.set(i, j, s);
        }
    }
    out
}

fn close(a: &Mat<C>, b: &Mat<C>) -> bool {
    a.d.iter().zip(&b.d).all(|(x, y)| (x - y).norm() < 1e-12)
}

#[test]
fn complex_qr_reconstructs_with_real_diagonal() -> Result<()> {
    let a = mat(5, 3, 7);
    let (q, r) = qr(&a, false)?;
    assert!(close(&matmul(&q, &r), &a));
    assert!((0..3).all(|i| r.at(i, i).im == 0.0));
    Ok(())
}

#[test]
fn complex_hessenberg_reconstructs() -> Result<()> {
    let a = mat(5, 5, 3);
    let (h, taus) = hessenberg(&a);
    let q = hessenberg_q(&h, &taus)?;
    let mut hh = h.clone();
    for i in 0..5 {
        for j in 0..5 {
            if i > j + 1 {
                hh.set(i, j, C::zero());
            }
        }
    }
    let mut qh = q.clone();
    for i in 0..5 {
        for j in 0..5 {
            qh.set(i, j, q.at(j, i).conj());
        }
    }
    assert!(close(&matmul(&matmul(&q, &hh), &qh), &a));
    Ok(())
}
