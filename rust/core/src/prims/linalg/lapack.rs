//! Unblocked kernels with LAPACK's conventions, generic over the field
//! (float32, float64, complex64, complex128): Householder reflectors as
//! `xlarfg` (`H = I - τ v vᴴ`, `v₀ = 1`, `β = -sign(Re α)‖(α, x)‖` real, so a
//! QR's `R` and a Hessenberg reduction's subdiagonal come out real as
//! LAPACK's), `xgeqr2`/`xung2r` QR, `xgehd2`/`xunghr` Hessenberg reduction
//! and `xgetf2` partial-pivot LU (pivot: first largest `|Re| + |Im|`; a
//! zero pivot leaves its column unscaled).
//!
//! The default mode runs these where faer's conventions differ from
//! LAPACK's for complex operands (faer's reflectors give `R` a complex
//! diagonal) and for the LU/QR inputs faer treats differently (zero pivots,
//! rank-deficient QR); `hessenberg` always runs here.
//!
//! Float arithmetic over a generic field, and index arithmetic bounded by
//! the matrix dimensions (loops run below `r`/`c`).
#![allow(clippy::arithmetic_side_effects)]

use crate::error::{Error, Result};
use num_complex::{Complex, ComplexFloat};
use num_traits::{Float, Zero};

/// A field element: real or complex, built from its parts.
pub trait Field: ComplexFloat<Real = Self::R> + Default + Send + Sync {
    type R: Float;
    /// `re + i im` (`im` is ignored for a real field).
    fn make(re: Self::R, im: Self::R) -> Self;
    /// `|Re| + |Im|`, LAPACK's `cabs1` (the pivot measure of `getrf`).
    fn abs1(self) -> Self::R {
        self.re().abs() + self.im().abs()
    }
    fn abs_sq(self) -> Self::R {
        self.re() * self.re() + self.im() * self.im()
    }
}

macro_rules! real_field {
    ($t:ty) => {
        impl Field for $t {
            type R = $t;
            fn make(re: $t, _im: $t) -> $t {
                re
            }
        }
        impl Field for Complex<$t> {
            type R = $t;
            fn make(re: $t, im: $t) -> Complex<$t> {
                Complex::new(re, im)
            }
        }
    };
}
real_field!(f32);
real_field!(f64);

/// A dense row-major matrix. Indices are always below `r`/`c`, so the flat
/// offset `i * c + j` is below `d.len()`.
#[derive(Debug, Clone)]
pub struct Mat<T> {
    pub r: usize,
    pub c: usize,
    pub d: Vec<T>,
}

impl<T: Field> Mat<T> {
    pub fn zeros(r: usize, c: usize) -> Result<Mat<T>> {
        let len = r.checked_mul(c).ok_or_else(|| Error::Overflow {
            what: "linalg",
            detail: format!("{r}x{c} matrix"),
        })?;
        Ok(Mat {
            r,
            c,
            d: vec![T::zero(); len],
        })
    }

    pub fn eye(r: usize, c: usize) -> Result<Mat<T>> {
        let mut m = Mat::zeros(r, c)?;
        for i in 0..r.min(c) {
            m.set(i, i, T::one());
        }
        Ok(m)
    }

    pub fn from_rows(r: usize, c: usize, d: Vec<T>) -> Mat<T> {
        Mat { r, c, d }
    }

    pub fn at(&self, i: usize, j: usize) -> T {
        let k = i.wrapping_mul(self.c).wrapping_add(j);
        self.d
            .get(k)
            .copied()
            .unwrap_or_else(|| T::make(T::R::nan(), T::R::zero()))
    }

    pub fn set(&mut self, i: usize, j: usize, v: T) {
        let k = i.wrapping_mul(self.c).wrapping_add(j);
        if let Some(x) = self.d.get_mut(k) {
            *x = v;
        }
    }

    fn swap_rows(&mut self, a: usize, b: usize) {
        for j in 0..self.c {
            let t = self.at(a, j);
            self.set(a, j, self.at(b, j));
            self.set(b, j, t);
        }
    }

    /// Rows `0..rows` (all columns) and columns `0..cols`.
    pub fn top_left(&self, rows: usize, cols: usize) -> Result<Mat<T>> {
        let mut out = Mat::zeros(rows, cols)?;
        for i in 0..rows.min(self.r) {
            for j in 0..cols.min(self.c) {
                out.set(i, j, self.at(i, j));
            }
        }
        Ok(out)
    }
}

// ----------------------------------------------------------------- reflectors

/// A Householder reflector `I - τ v vᴴ` acting on rows (or columns)
/// `start..` with `v = [1, tail...]`.
struct Reflector<T> {
    start: usize,
    v: Vec<T>,
    tau: T,
}

/// `xlarfg` on column `j` of `a` from row `i`: `a[i, j]` becomes `β`, the
/// rows below are left holding `v`'s tail; returns the reflector.
fn larfg_col<T: Field>(a: &mut Mat<T>, i: usize, j: usize) -> Reflector<T> {
    let alpha = a.at(i, j);
    let tail: Vec<T> = (i + 1..a.r).map(|p| a.at(p, j)).collect();
    let xnorm = tail.iter().fold(T::R::zero(), |s, x| s + x.abs_sq()).sqrt();
    let (ar, ai) = (alpha.re(), alpha.im());
    let mut v = Vec::with_capacity(tail.len() + 1);
    v.push(T::one());
    if xnorm == T::R::zero() && ai == T::R::zero() {
        v.extend(tail);
        return Reflector {
            start: i,
            v,
            tau: T::zero(),
        };
    }
    let norm = ar.hypot(ai).hypot(xnorm);
    let beta = if ar.is_sign_negative() { norm } else { -norm };
    let tau = T::make((beta - ar) / beta, -ai / beta);
    let scale = T::one() / (alpha - T::make(beta, T::R::zero()));
    for (p, x) in (i + 1..a.r).zip(tail) {
        let y = x * scale;
        a.set(p, j, y);
        v.push(y);
    }
    a.set(i, j, T::make(beta, T::R::zero()));
    Reflector { start: i, v, tau }
}

impl<T: Field> Reflector<T> {
    /// `c := (I - τ v vᴴ) c` on columns `cols` (with `conj_tau`: `τ̄`, i.e. `Hᴴ`).
    fn left(&self, c: &mut Mat<T>, cols: std::ops::Range<usize>, conj_tau: bool) {
        let tau = if conj_tau { self.tau.conj() } else { self.tau };
        if tau == T::zero() {
            return;
        }
        for j in cols {
            let mut w = T::zero();
            for (k, vk) in self.v.iter().enumerate() {
                w = w + vk.conj() * c.at(self.start + k, j);
            }
            let tw = tau * w;
            for (k, vk) in self.v.iter().enumerate() {
                let p = self.start + k;
                c.set(p, j, c.at(p, j) - *vk * tw);
            }
        }
    }

    /// `c := c (I - τ v vᴴ)` on rows `rows`.
    fn right(&self, c: &mut Mat<T>, rows: std::ops::Range<usize>) {
        if self.tau == T::zero() {
            return;
        }
        for i in rows {
            let mut w = T::zero();
            for (k, vk) in self.v.iter().enumerate() {
                w = w + c.at(i, self.start + k) * *vk;
            }
            let tw = self.tau * w;
            for (k, vk) in self.v.iter().enumerate() {
                let p = self.start + k;
                c.set(i, p, c.at(i, p) - tw * vk.conj());
            }
        }
    }
}

/// `H₀ H₁ … H_{k-1}` applied to the first `cols` columns of the identity.
fn accumulate<T: Field>(hs: &[Reflector<T>], rows: usize, cols: usize) -> Result<Mat<T>> {
    let mut q = Mat::eye(rows, cols)?;
    for h in hs.iter().rev() {
        h.left(&mut q, 0..cols, false);
    }
    Ok(q)
}

// ----------------------------------------------------------------- qr

/// `xgeqr2` + `xung2r`: `(q, r)` of `a` (`q` is `m x m` with
/// `full_matrices`, else `m x k`; `r` is `m x n`, else `k x n`).
pub fn qr<T: Field>(a: &Mat<T>, full_matrices: bool) -> Result<(Mat<T>, Mat<T>)> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut f = a.clone();
    let mut hs = Vec::with_capacity(k);
    for j in 0..k {
        let h = larfg_col(&mut f, j, j);
        h.left(&mut f, j + 1..n, true);
        hs.push(h);
    }
    let (qcols, rrows) = if full_matrices { (m, m) } else { (k, k) };
    let mut r = f.top_left(rrows, n)?;
    for i in 0..rrows {
        for j in 0..i.min(n) {
            r.set(i, j, T::zero());
        }
    }
    Ok((accumulate(&hs, m, qcols)?, r))
}

// ----------------------------------------------------------------- hessenberg

/// `xgehd2`: the packed Hessenberg reduction of square `a` (the reflectors'
/// tails below the subdiagonal) and its `n - 1` coefficients `τ`.
pub fn hessenberg<T: Field>(a: &Mat<T>) -> (Mat<T>, Vec<T>) {
    let n = a.r;
    let mut f = a.clone();
    let mut taus = Vec::with_capacity(n.saturating_sub(1));
    for i in 0..n.saturating_sub(1) {
        let h = larfg_col(&mut f, i + 1, i);
        // both applications span columns i + 1..: column i keeps the tail
        h.right(&mut f, 0..n);
        h.left(&mut f, i + 1..n, true);
        taus.push(h.tau);
    }
    (f, taus)
}

/// `xunghr`: the unitary `Q` of a packed Hessenberg reduction.
pub fn hessenberg_q<T: Field>(packed: &Mat<T>, taus: &[T]) -> Result<Mat<T>> {
    let n = packed.r;
    let hs: Vec<Reflector<T>> = taus
        .iter()
        .enumerate()
        .map(|(i, &tau)| {
            let mut v = vec![T::one()];
            v.extend((i + 2..n).map(|p| packed.at(p, i)));
            Reflector {
                start: i + 1,
                v,
                tau,
            }
        })
        .collect();
    accumulate(&hs, n, n)
}

// ----------------------------------------------------------------- lu

/// `xgetf2`: (packed L\U, pivots, permutation) of `a`.
pub fn lu<T: Field>(a: &Mat<T>) -> (Mat<T>, Vec<usize>, Vec<usize>) {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut f = a.clone();
    let mut piv = Vec::with_capacity(k);
    let mut perm: Vec<usize> = (0..m).collect();
    for j in 0..k {
        let mut p = j;
        let mut best = f.at(j, j).abs1();
        for i in j + 1..m {
            let v = f.at(i, j).abs1();
            if v > best {
                (p, best) = (i, v);
            }
        }
        piv.push(p);
        let pivot = f.at(p, j);
        if pivot == T::zero() {
            continue;
        }
        if p != j {
            f.swap_rows(p, j);
            perm.swap(p, j);
        }
        let inv = T::one() / pivot;
        for i in j + 1..m {
            let l = f.at(i, j) * inv;
            f.set(i, j, l);
            for c in j + 1..n {
                f.set(i, c, f.at(i, c) - l * f.at(j, c));
            }
        }
    }
    (f, piv, perm)
}
