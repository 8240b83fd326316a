//! The complex Schur decomposition `A = Z T Zᴴ` (`T` upper triangular, `Z`
//! unitary) of a complex matrix: LAPACK's Hessenberg reduction
//! ([`super::lapack::hessenberg`]) then shifted QR sweeps with Givens
//! rotations on the active block (Wilkinson shift, deflation on negligible
//! subdiagonal entries as `zlahqr`, exceptional shifts every ten sweeps).
//! Plain scalar loops in a fixed order, so also deterministic across CPUs.
//! A matrix that does not converge (or holds a non-finite entry) gives NaNs.
//!
//! Float arithmetic over a generic field, and index arithmetic bounded by
//! the matrix dimension.
#![allow(clippy::arithmetic_side_effects)]

use super::lapack::{self, Field, Mat};
use crate::error::Result;
use num_complex::Complex;
use num_traits::{Float, Zero};

/// A complex matrix.
type CMat<R> = Mat<Complex<R>>;

/// `z * r` for a real `r`.
fn times<R: Float>(z: Complex<R>, r: R) -> Complex<R> {
    Complex::new(z.re * r, z.im * r)
}

/// `|Re z| + |Im z|`.
fn abs1<R: Float>(z: Complex<R>) -> R {
    z.re.abs() + z.im.abs()
}

/// A plane rotation `[c s; -s̄ c]` (real `c`) zeroing `b` against `a`.
#[derive(Clone, Copy)]
struct Givens<R> {
    c: R,
    s: Complex<R>,
}

impl<R: Float> Givens<R>
where
    Complex<R>: Field,
{
    fn new(a: Complex<R>, b: Complex<R>) -> Givens<R> {
        let (na, nb) = (a.norm(), b.norm());
        if nb == R::zero() {
            return Givens {
                c: R::one(),
                s: Complex::zero(),
            };
        }
        if na == R::zero() {
            return Givens {
                c: R::zero(),
                s: times(b.conj(), nb.recip()),
            };
        }
        let r = na.hypot(nb);
        let phase = times(a, na.recip());
        Givens {
            c: na / r,
            s: times(phase * b.conj(), r.recip()),
        }
    }

    /// Rows `i`, `i + 1` of `m` over columns `cols`: `[x; y] := G [x; y]`.
    fn rows(&self, m: &mut Mat<Complex<R>>, i: usize, cols: std::ops::Range<usize>) {
        for j in cols {
            let (x, y) = (m.at(i, j), m.at(i + 1, j));
            m.set(i, j, times(x, self.c) + self.s * y);
            m.set(i + 1, j, times(y, self.c) - self.s.conj() * x);
        }
    }

    /// Columns `j`, `j + 1` of `m` over rows `rows`: `[x y] := [x y] Gᴴ`.
    fn cols(&self, m: &mut Mat<Complex<R>>, j: usize, rows: std::ops::Range<usize>) {
        for i in rows {
            let (x, y) = (m.at(i, j), m.at(i, j + 1));
            m.set(i, j, times(x, self.c) + y * self.s.conj());
            m.set(i, j + 1, times(y, self.c) - x * self.s);
        }
    }
}

/// The eigenvalue of the trailing 2x2 block `[a b; c d]` closer to `d`.
fn wilkinson<R: Float>(a: Complex<R>, b: Complex<R>, c: Complex<R>, d: Complex<R>) -> Complex<R> {
    let two = R::one() + R::one();
    let half = times(a - d, two.recip());
    let disc = (half * half + b * c).sqrt();
    let (m1, m2) = (d + half + disc, d + half - disc);
    if (m1 - d).norm() <= (m2 - d).norm() {
        m1
    } else {
        m2
    }
}

/// The start of the active block ending at `hi - 1`: the row after the last
/// negligible subdiagonal entry (set to zero).
fn block_start<R: Float>(h: &mut Mat<Complex<R>>, hi: usize) -> usize
where
    Complex<R>: Field,
{
    let eps = R::epsilon();
    let mut l = hi - 1;
    while l > 0 {
        let sub = abs1(h.at(l, l - 1));
        let diag = abs1(h.at(l - 1, l - 1)) + abs1(h.at(l, l));
        if sub <= eps * diag || sub < R::min_positive_value() {
            h.set(l, l - 1, Complex::zero());
            break;
        }
        l -= 1;
    }
    l
}

/// One shifted QR sweep on the active block `[l, hi)` of `t` (all of `t`'s
/// affected rows and columns updated), accumulating into `z`.
fn sweep<R: Float>(
    t: &mut Mat<Complex<R>>, z: &mut Mat<Complex<R>>, l: usize, hi: usize, mu: Complex<R>,
) where
    Complex<R>: Field,
{
    let n = t.r;
    for k in l..hi {
        t.set(k, k, t.at(k, k) - mu);
    }
    let mut rots = Vec::with_capacity(hi - l);
    for k in l..hi - 1 {
        let g = Givens::new(t.at(k, k), t.at(k + 1, k));
        g.rows(t, k, k..n);
        rots.push(g);
    }
    for (k, g) in (l..hi - 1).zip(&rots) {
        g.cols(t, k, 0..(k + 2).min(hi));
        g.cols(z, k, 0..n);
    }
    for k in l..hi {
        t.set(k, k, t.at(k, k) + mu);
    }
}

/// `(t, z)` with `a = z t zᴴ`, or NaNs where the iteration does not converge.
pub fn schur<R: Float + Default + Send + Sync>(a: &Mat<Complex<R>>) -> Result<(CMat<R>, CMat<R>)>
where
    Complex<R>: Field,
{
    let n = a.r;
    let (packed, taus) = lapack::hessenberg(a);
    let mut z = lapack::hessenberg_q(&packed, &taus)?;
    let mut t = packed;
    for i in 0..n {
        for j in 0..i.saturating_sub(1) {
            t.set(i, j, Complex::zero());
        }
    }
    let finite = t.d.iter().all(|x| x.re.is_finite() && x.im.is_finite());
    let mut hi = n;
    let mut its = 0usize;
    let budget = 30 * n.max(10);
    while finite && hi > 0 && its < budget {
        let l = block_start(&mut t, hi);
        if l == hi - 1 {
            hi -= 1;
            its = 0;
            continue;
        }
        its += 1;
        let d = t.at(hi - 1, hi - 1);
        let mu = if its.is_multiple_of(10) {
            // exceptional shift: perturb by the last subdiagonal's size
            d + Complex::new(abs1(t.at(hi - 1, hi - 2)), R::zero())
        } else {
            wilkinson(
                t.at(hi - 2, hi - 2),
                t.at(hi - 2, hi - 1),
                t.at(hi - 1, hi - 2),
                d,
            )
        };
        sweep(&mut t, &mut z, l, hi, mu);
    }
    if !finite || hi > 0 {
        let nan = Complex::new(R::nan(), R::nan());
        t.d.iter_mut().for_each(|x| *x = nan);
        z.d.iter_mut().for_each(|x| *x = nan);
    }
    Ok((t, z))
}
