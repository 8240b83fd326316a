//! Tests of `prims::linalg::schur`'s internals (reached through `microjax::internals`).

use super::uniform_values;
use microjax::internals::prims_linalg_lapack::Mat;
use microjax::internals::prims_linalg_schur::*;
use microjax::Result;
use num_complex::Complex;
use num_traits::Zero;

type C = Complex<f64>;

#[test]
fn schur_reconstructs_and_is_triangular() -> Result<()> {
    let n = 6;
    let mut next = uniform_values(11u64);
    let d: Vec<C> = (0..n * n).map(|_| C::new(next(), next())).collect();
    let a = Mat::from_rows(n, n, d);
    let (t, z) = schur(&a)?;
    for i in 0..n {
        for j in 0..i {
            assert!(t.at(i, j).norm() < 1e-12, "t[{i},{j}] = {}", t.at(i, j));
        }
    }
    for i in 0..n {
        for j in 0..n {
            let mut x = C::zero();
            for k in 0..n {
                for l in 0..n {
                    x += z.at(i, k) * t.at(k, l) * z.at(j, l).conj();
                }
            }
            assert!((x - a.at(i, j)).norm() < 1e-12);
        }
    }
    Ok(())
}
