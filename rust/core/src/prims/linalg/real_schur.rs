//! The real Schur decomposition `A = Z T Zᵀ` of a real matrix with LAPACK
//! `gees`'s conventions: `T` quasi-upper-triangular, a standardized 2x2
//! block (equal diagonal entries, off-diagonal entries of opposite signs)
//! per conjugate eigenvalue pair, `Z` orthogonal.
//!
//! faer computes a real Schur form inside its `evd_real` but does not export
//! it (its `real_schur` module is crate-private in faer 0.24), so this file
//! has its own: LAPACK's Hessenberg reduction ([`super::lapack::hessenberg`])
//! then Francis double-shift QR sweeps with 3-element Householder
//! reflectors on the active block as LAPACK's small-matrix routine `dlahqr`
//! (the Ahues–Tisseur deflation test, a search for two consecutive small
//! subdiagonal entries, exceptional shifts after 10 and 20 sweeps without
//! deflation), and each converged 2x2 block standardized by the rotation of
//! `dlanv2`. Plain scalar loops in a fixed order, so deterministic across
//! CPUs. A matrix that does not converge (or holds a non-finite entry)
//! gives NaNs.
//!
//! Float arithmetic, and index arithmetic bounded by the matrix dimension
//! (every index is below `n`; subtractions happen only where the loop
//! bounds keep them non-negative).
#![allow(clippy::arithmetic_side_effects)]

use super::lapack::{self, Field, Mat};
use crate::error::Result;
use num_traits::Float;

/// A square row-major matrix over a real float (the iteration's working
/// copy; indices stay below `n`, so the offset `i * n + j` is in bounds).
struct Sq<R> {
    n: usize,
    d: Vec<R>,
}

impl<R: Float> Sq<R> {
    fn at(&self, i: usize, j: usize) -> R {
        self.d
            .get(i.wrapping_mul(self.n).wrapping_add(j))
            .copied()
            .unwrap_or_else(R::nan)
    }

    fn set(&mut self, i: usize, j: usize, v: R) {
        if let Some(x) = self.d.get_mut(i.wrapping_mul(self.n).wrapping_add(j)) {
            *x = v;
        }
    }
}

/// `|a|` with the sign of `b` (Fortran's `SIGN`; `+` for `b = ±0`).
fn sign<R: Float>(a: R, b: R) -> R {
    if b < R::zero() {
        -a.abs()
    } else {
        a.abs()
    }
}

/// A plane rotation `x' = c x + s y`, `y' = c y - s x` (LAPACK's `drot`).
#[derive(Clone, Copy)]
struct Rot<R> {
    c: R,
    s: R,
}

impl<R: Float> Rot<R> {
    /// Rows `i`, `i + 1` over columns `cols`.
    fn rows(self, m: &mut Sq<R>, i: usize, cols: std::ops::Range<usize>) {
        for j in cols {
            let (x, y) = (m.at(i, j), m.at(i + 1, j));
            m.set(i, j, self.c * x + self.s * y);
            m.set(i + 1, j, self.c * y - self.s * x);
        }
    }

    /// Columns `j`, `j + 1` over rows `rows`.
    fn cols(self, m: &mut Sq<R>, j: usize, rows: std::ops::Range<usize>) {
        for i in rows {
            let (x, y) = (m.at(i, j), m.at(i, j + 1));
            m.set(i, j, self.c * x + self.s * y);
            m.set(i, j + 1, self.c * y - self.s * x);
        }
    }
}

/// The standardized Schur form of the 2x2 block `[a b; c d]` (LAPACK's
/// `dlanv2`): `[a b; c d] := [cs -sn; sn cs]ᵀ [a b; c d] [cs -sn; sn cs]`
/// upper triangular for real eigenvalues, or with `a = d` and `b c < 0` for
/// a conjugate pair; returns the rotation.
fn lanv2<R: Float>(blk: &mut [R; 4]) -> Rot<R> {
    let [a, b, c, d] = *blk;
    let (zero, one) = (R::zero(), R::one());
    if c == zero {
        return Rot { c: one, s: zero };
    }
    if b == zero {
        // swap rows and columns
        *blk = [d, -c, zero, a];
        return Rot { c: zero, s: one };
    }
    if (a - d) == zero && sign(one, b) != sign(one, c) {
        return Rot { c: one, s: zero };
    }
    let half = (one + one).recip();
    let four = one + one + one + one;
    let p = half * (a - d);
    let bcmax = b.abs().max(c.abs());
    let bcmis = b.abs().min(c.abs()) * sign(one, b) * sign(one, c);
    let scale = p.abs().max(bcmax);
    let z = (p / scale) * p + (bcmax / scale) * bcmis;
    if z < four * R::epsilon() {
        return equalize(blk);
    }
    // real eigenvalues: make the block upper triangular
    let z = p + sign(scale.sqrt() * z.sqrt(), p);
    let tau = c.hypot(z);
    *blk = [d + z, b - c, zero, d - (bcmax / z) * bcmis];
    Rot {
        c: z / tau,
        s: c / tau,
    }
}

/// `dlanv2`'s branch for complex (or nearly equal real) eigenvalues: the
/// rotation making the diagonal entries equal, then a triangularization
/// where the off-diagonal entries turn out of one sign.
fn equalize<R: Float>(blk: &mut [R; 4]) -> Rot<R> {
    let [a, b, c, d] = *blk;
    let (zero, one) = (R::zero(), R::one());
    let half = (one + one).recip();
    let temp = a - d;
    let p = half * temp;
    let sigma = b + c;
    let tau = sigma.hypot(temp);
    let cs = (half * (one + sigma.abs() / tau)).sqrt();
    let sn = -(p / (tau * cs)) * sign(one, sigma);
    let (aa, bb) = (a * cs + b * sn, -a * sn + b * cs);
    let (cc, dd) = (c * cs + d * sn, -c * sn + d * cs);
    let b = bb * cs + dd * sn;
    let c = -aa * sn + cc * cs;
    let mid = half * ((aa * cs + cc * sn) + (-bb * sn + dd * cs));
    *blk = [mid, b, c, mid];
    if c == zero {
        return Rot { c: cs, s: sn };
    }
    if b == zero {
        *blk = [mid, -c, zero, mid];
        return Rot { c: -sn, s: cs };
    }
    if sign(one, b) != sign(one, c) {
        return Rot { c: cs, s: sn };
    }
    // real eigenvalues after all: triangularize
    let (sab, sac) = (b.abs().sqrt(), c.abs().sqrt());
    let p = sign(sab * sac, c);
    let tau = (b + c).abs().sqrt().recip();
    *blk = [mid + p, b - c, zero, mid - p];
    let (cs1, sn1) = (sab * tau, sac * tau);
    Rot {
        c: cs * cs1 - sn * sn1,
        s: cs * sn1 + sn * cs1,
    }
}

/// The working state: `h` (becoming `T`), `z`, the matrix size and the
/// deflation thresholds.
struct Francis<R> {
    h: Sq<R>,
    z: Sq<R>,
    n: usize,
    ulp: R,
    small: R,
}

impl<R: Float> Francis<R> {
    fn habs(&self, i: usize, j: usize) -> R {
        self.h.at(i, j).abs()
    }

    /// The start `l` of the active block ending at row `i`: the row after
    /// the last negligible subdiagonal entry (set to zero).
    fn deflate(&mut self, i: usize) -> usize {
        let mut k = i;
        while k > 0 {
            let sub = self.habs(k, k - 1);
            if sub <= self.small {
                break;
            }
            let mut tst = self.habs(k - 1, k - 1) + self.habs(k, k);
            if tst == R::zero() {
                if k >= 2 {
                    tst = tst + self.habs(k - 1, k - 2);
                }
                if k + 1 < self.n {
                    tst = tst + self.habs(k + 1, k);
                }
            }
            if sub <= self.ulp * tst {
                let up = self.habs(k - 1, k);
                let (ab, ba) = (sub.max(up), sub.min(up));
                let diff = (self.h.at(k - 1, k - 1) - self.h.at(k, k)).abs();
                let (aa, bb) = (self.habs(k, k).max(diff), self.habs(k, k).min(diff));
                let s = aa + ab;
                if ba * (ab / s) <= self.small.max(self.ulp * (bb * (aa / s))) {
                    break;
                }
            }
            k -= 1;
        }
        if k > 0 {
            self.h.set(k, k - 1, R::zero());
        }
        k
    }

    /// The two shifts `(re1, im1, re2, im2)` of sweep number `sweeps` on the
    /// block `[l, i]`: the trailing 2x2 block's eigenvalues (a real pair
    /// both set to the one closer to `h[i, i]`), exceptional every 10.
    fn shifts(&self, l: usize, i: usize, sweeps: usize) -> [R; 4] {
        let one = R::one();
        let dat1 = (one + one + one) / (one + one + one + one);
        let dat2 = -R::from(0.4375).unwrap_or(dat1);
        let zero = R::zero();
        let [h11, h12, h21, h22] = if sweeps.is_multiple_of(20) {
            let s = self.habs(i, i - 1) + self.habs(i - 1, i - 2);
            let h11 = dat1 * s + self.h.at(i, i);
            [h11, dat2 * s, s, h11]
        } else if sweeps.is_multiple_of(10) {
            let s = self.habs(l + 1, l) + self.habs(l + 2, l + 1);
            let h11 = dat1 * s + self.h.at(l, l);
            [h11, dat2 * s, s, h11]
        } else {
            [
                self.h.at(i - 1, i - 1),
                self.h.at(i - 1, i),
                self.h.at(i, i - 1),
                self.h.at(i, i),
            ]
        };
        let s = h11.abs() + h12.abs() + h21.abs() + h22.abs();
        if s == zero {
            return [zero; 4];
        }
        let (h11, h12, h21, h22) = (h11 / s, h12 / s, h21 / s, h22 / s);
        let tr = (h11 + h22) / (one + one);
        let det = (h11 - tr) * (h22 - tr) - h12 * h21;
        let rtdisc = det.abs().sqrt();
        if det >= zero {
            return [tr * s, rtdisc * s, tr * s, -rtdisc * s];
        }
        let (r1, r2) = (tr + rtdisc, tr - rtdisc);
        let r = if (r1 - h22).abs() <= (r2 - h22).abs() {
            r1
        } else {
            r2
        };
        [r * s, zero, r * s, zero]
    }

    /// The first column of the double-shift polynomial at row `m`, scaled.
    fn start_vector(&self, m: usize, sh: [R; 4]) -> [R; 3] {
        let [r1, i1, r2, i2] = sh;
        let hmm = self.h.at(m, m);
        let s = (hmm - r2).abs() + i2.abs() + self.habs(m + 1, m);
        let h21s = self.h.at(m + 1, m) / s;
        let v0 = h21s * self.h.at(m, m + 1) + (hmm - r1) * ((hmm - r2) / s) - i1 * (i2 / s);
        let v1 = h21s * (hmm + self.h.at(m + 1, m + 1) - r1 - r2);
        let v2 = h21s * self.h.at(m + 2, m + 1);
        let s = v0.abs() + v1.abs() + v2.abs();
        [v0 / s, v1 / s, v2 / s]
    }

    /// The row `m` where the sweep starts (two consecutive small subdiagonal
    /// entries, or `l`) and its start vector.
    fn sweep_start(&self, l: usize, i: usize, sh: [R; 4]) -> (usize, [R; 3]) {
        let mut m = i - 2;
        loop {
            let v = self.start_vector(m, sh);
            if m == l {
                return (m, v);
            }
            let h00 = self.habs(m, m - 1) * (v[1].abs() + v[2].abs());
            let h01 =
                v[0].abs() * (self.habs(m - 1, m - 1) + self.habs(m, m) + self.habs(m + 1, m + 1));
            if h00 <= self.ulp * h01 {
                return (m, v);
            }
            m -= 1;
        }
    }

    /// One double-shift sweep on the block `[l, i]` from row `m`.
    fn sweep(&mut self, l: usize, i: usize, m: usize, mut v: [R; 3]) {
        let n = self.n;
        for k in m..i {
            let nr = 3.min(i - k + 1);
            if k > m {
                for (p, x) in v.iter_mut().enumerate().take(nr) {
                    *x = self.h.at(k + p, k - 1);
                }
            }
            let t1 = larfg(&mut v, nr);
            if k > m {
                self.h.set(k, k - 1, v[0]);
                self.h.set(k + 1, k - 1, R::zero());
                if k + 1 < i {
                    self.h.set(k + 2, k - 1, R::zero());
                }
            } else if m > l {
                let x = self.h.at(k, k - 1);
                self.h.set(k, k - 1, x * (R::one() - t1));
            }
            let refl = Reflector { k, nr, v, t1 };
            refl.rows(&mut self.h, k..n);
            refl.cols(&mut self.h, 0..(k + 4).min(i + 1));
            refl.cols(&mut self.z, 0..n);
        }
    }

    /// Standardizes the converged 2x2 block at rows `i - 1`, `i`.
    fn standardize(&mut self, i: usize) {
        let mut blk = [
            self.h.at(i - 1, i - 1),
            self.h.at(i - 1, i),
            self.h.at(i, i - 1),
            self.h.at(i, i),
        ];
        let rot = lanv2(&mut blk);
        let [a, b, c, d] = blk;
        self.h.set(i - 1, i - 1, a);
        self.h.set(i - 1, i, b);
        self.h.set(i, i - 1, c);
        self.h.set(i, i, d);
        rot.rows(&mut self.h, i - 1, i + 1..self.n);
        rot.cols(&mut self.h, i - 1, 0..i - 1);
        rot.cols(&mut self.z, i - 1, 0..self.n);
    }

    /// Runs the iteration; `false` where a block does not converge.
    fn run(&mut self) -> bool {
        let budget = 30 * self.n.max(10);
        let mut end = self.n;
        while end > 0 {
            let i = end - 1;
            let mut done = None;
            for sweeps in 0..=budget {
                let l = self.deflate(i);
                if l + 1 >= i {
                    done = Some(l);
                    break;
                }
                let sh = self.shifts(l, i, sweeps + 1);
                let (m, v) = self.sweep_start(l, i, sh);
                self.sweep(l, i, m, v);
            }
            let Some(l) = done else { return false };
            if l + 1 == i {
                self.standardize(i);
            }
            end = l;
        }
        true
    }
}

/// LAPACK's `dlarfg` on `v[..nr]`: `v[0]` becomes `β`, `v[1..nr]` the
/// reflector's tail; returns `τ`.
fn larfg<R: Float>(v: &mut [R; 3], nr: usize) -> R {
    let alpha = v[0];
    let xnorm = v
        .iter()
        .take(nr)
        .skip(1)
        .fold(R::zero(), |s, x| s.hypot(*x));
    if xnorm == R::zero() {
        return R::zero();
    }
    let beta = -sign(alpha.hypot(xnorm), alpha);
    let scale = (alpha - beta).recip();
    v.iter_mut().take(nr).skip(1).for_each(|x| *x = *x * scale);
    v[0] = beta;
    (beta - alpha) / beta
}

/// `I - τ [1, v₁, v₂] [1, v₁, v₂]ᵀ` on rows/columns `k..k + nr`.
struct Reflector<R> {
    k: usize,
    nr: usize,
    v: [R; 3],
    t1: R,
}

impl<R: Float> Reflector<R> {
    /// `(v₂, v₃, τ, τ v₂, τ v₃)`.
    fn parts(&self) -> [R; 5] {
        let [_, v2, v3] = self.v;
        [v2, v3, self.t1, self.t1 * v2, self.t1 * v3]
    }

    fn rows(&self, m: &mut Sq<R>, cols: std::ops::Range<usize>) {
        let (k, [v2, v3, t1, t2, t3]) = (self.k, self.parts());
        for j in cols {
            let mut sum = m.at(k, j) + v2 * m.at(k + 1, j);
            if self.nr == 3 {
                sum = sum + v3 * m.at(k + 2, j);
                m.set(k + 2, j, m.at(k + 2, j) - sum * t3);
            }
            m.set(k, j, m.at(k, j) - sum * t1);
            m.set(k + 1, j, m.at(k + 1, j) - sum * t2);
        }
    }

    fn cols(&self, m: &mut Sq<R>, rows: std::ops::Range<usize>) {
        let (k, [v2, v3, t1, t2, t3]) = (self.k, self.parts());
        for i in rows {
            let mut sum = m.at(i, k) + v2 * m.at(i, k + 1);
            if self.nr == 3 {
                sum = sum + v3 * m.at(i, k + 2);
                m.set(i, k + 2, m.at(i, k + 2) - sum * t3);
            }
            m.set(i, k, m.at(i, k) - sum * t1);
            m.set(i, k + 1, m.at(i, k + 1) - sum * t2);
        }
    }
}

/// `(t, z)` with `a = z t zᵀ` in the real Schur form, or NaNs where the
/// iteration does not converge.
pub fn real_schur<R: Float + Field>(a: &Mat<R>) -> Result<(Mat<R>, Mat<R>)> {
    let n = a.r;
    let (packed, taus) = lapack::hessenberg(a);
    let z = lapack::hessenberg_q(&packed, &taus)?;
    let mut h = Sq { n, d: packed.d };
    for i in 0..n {
        for j in 0..i.saturating_sub(1) {
            h.set(i, j, R::zero());
        }
    }
    let finite = h.d.iter().all(|x| Float::is_finite(*x));
    let ulp = R::epsilon();
    let small = R::min_positive_value() * (R::from(n).unwrap_or(R::one()) / ulp);
    let mut f = Francis {
        h,
        z: Sq { n, d: z.d },
        n,
        ulp,
        small,
    };
    if !finite || !f.run() {
        f.h.d.iter_mut().for_each(|x| *x = R::nan());
        f.z.d.iter_mut().for_each(|x| *x = R::nan());
    }
    Ok((Mat::from_rows(n, n, f.h.d), Mat::from_rows(n, n, f.z.d)))
}
