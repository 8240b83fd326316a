//! The hand-written linalg kernels: a dense f64 matrix type and the
//! factorizations (Cholesky, triangular solve, LU, QR, eigh, svd) evaluated
//! per matrix of a batched operand, in f64 for either input precision.
//!
//! These serve [`Determinism::Portable`](crate::exec::Determinism): plain
//! scalar loops with separate multiplies and adds in a fixed order, so the
//! bits are the same on every x86-64 CPU at any SIMD level and thread count.
//! faer (the [`super::dense`] kernels of the default mode) dispatches at run
//! time to AVX2 or AVX-512 code with FMA and cache-dependent blocking, whose
//! bits differ between CPU models, so the portable mode cannot use it. The
//! LU and QR kernels also give the default mode LAPACK's results where faer
//! departs from LAPACK (zero pivots, rank-deficient QR): [`lu_f64`],
//! [`qr_f64`]. Empty matrices (a zero dimension) always run here.

use super::{LinalgOp, SolveOpts};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::family::Family;

// ----------------------------------------------------------------- matrices

/// A dense row-major f64 matrix. Indices are always below `r`/`c` (loops run
/// over `0..r`, `0..c`), so the flat offset `i * c + j` is below `d.len()`.
#[derive(Debug, Clone)]
pub struct Mat {
    pub r: usize,
    pub c: usize,
    pub d: Vec<f64>,
}

impl Mat {
    fn full(r: usize, c: usize, v: f64) -> Result<Mat> {
        let len = r.checked_mul(c).ok_or_else(|| Error::Overflow {
            what: "linalg",
            detail: format!("{r}x{c} matrix"),
        })?;
        Ok(Mat {
            r,
            c,
            d: vec![v; len],
        })
    }

    pub fn eye(r: usize, c: usize) -> Result<Mat> {
        let mut m = Mat::full(r, c, 0.0)?;
        for i in 0..r.min(c) {
            m.set(i, i, 1.0);
        }
        Ok(m)
    }

    pub fn from_slice(r: usize, c: usize, d: &[f64]) -> Mat {
        Mat {
            r,
            c,
            d: d.to_vec(),
        }
    }

    fn idx(&self, i: usize, j: usize) -> usize {
        i.wrapping_mul(self.c).wrapping_add(j)
    }

    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.d.get(self.idx(i, j)).copied().unwrap_or(f64::NAN)
    }

    fn set(&mut self, i: usize, j: usize, v: f64) {
        let k = self.idx(i, j);
        if let Some(x) = self.d.get_mut(k) {
            *x = v;
        }
    }

    fn transpose(&self) -> Result<Mat> {
        let mut t = Mat::full(self.c, self.r, 0.0)?;
        for i in 0..self.r {
            for j in 0..self.c {
                t.set(j, i, self.at(i, j));
            }
        }
        Ok(t)
    }

    fn swap_rows(&mut self, a: usize, b: usize) {
        for j in 0..self.c {
            let (x, y) = (self.at(a, j), self.at(b, j));
            self.set(a, j, y);
            self.set(b, j, x);
        }
    }

    /// The first `c` columns.
    fn left_cols(&self, c: usize) -> Result<Mat> {
        let mut out = Mat::full(self.r, c, 0.0)?;
        for i in 0..self.r {
            for j in 0..c {
                out.set(i, j, self.at(i, j));
            }
        }
        Ok(out)
    }

    /// The first `r` rows.
    fn top_rows(&self, r: usize) -> Result<Mat> {
        let mut out = Mat::full(r, self.c, 0.0)?;
        for i in 0..r {
            for j in 0..self.c {
                out.set(i, j, self.at(i, j));
            }
        }
        Ok(out)
    }

    pub fn col_dot(&self, p: usize, q: usize) -> f64 {
        (0..self.r).map(|i| self.at(i, p) * self.at(i, q)).sum()
    }

    /// Rotates columns `p`, `q`: `(p, q) <- (c p - s q, s p + c q)`.
    fn rotate_cols(&mut self, p: usize, q: usize, c: f64, s: f64) {
        for i in 0..self.r {
            let (xp, xq) = (self.at(i, p), self.at(i, q));
            self.set(i, p, c * xp - s * xq);
            self.set(i, q, s * xp + c * xq);
        }
    }

    fn rotate_rows(&mut self, p: usize, q: usize, c: f64, s: f64) {
        for j in 0..self.c {
            let (xp, xq) = (self.at(p, j), self.at(q, j));
            self.set(p, j, c * xp - s * xq);
            self.set(q, j, s * xp + c * xq);
        }
    }
}

/// The Jacobi rotation `t = tan(θ)` that annihilates the coupling whose
/// ratio is `zeta` (the smaller root of `t² + 2ζt - 1 = 0`), with `(c, s)`.
fn jacobi_rotation(zeta: f64) -> (f64, f64) {
    let t = if zeta.abs() > 1e150 {
        0.5 / zeta
    } else {
        let sign = if zeta >= 0.0 { 1.0 } else { -1.0 };
        sign / (zeta.abs() + (1.0 + zeta * zeta).sqrt())
    };
    let c = 1.0 / (1.0 + t * t).sqrt();
    (c, t * c)
}

const MAX_SWEEPS: usize = 60;

fn cholesky(a: &Mat) -> Result<Mat> {
    let n = a.r;
    let mut l = Mat::full(n, n, 0.0)?;
    for j in 0..n {
        let mut s = a.at(j, j);
        for k in 0..j {
            s -= l.at(j, k) * l.at(j, k);
        }
        if s.is_nan() || s <= 0.0 {
            // Not positive definite (or NaN): LAPACK fails, JAX returns NaNs.
            return Mat::full(n, n, f64::NAN);
        }
        let d = s.sqrt();
        l.set(j, j, d);
        for i in j.saturating_add(1)..n {
            let mut s = a.at(i, j);
            for k in 0..j {
                s -= l.at(i, k) * l.at(j, k);
            }
            l.set(i, j, s / d);
        }
    }
    Ok(l)
}

/// Solves `t x = b` for triangular `t` (every column of `b`).
fn substitute(t: &Mat, mut x: Mat, lower: bool) -> Mat {
    let m = t.r;
    for col in 0..x.c {
        if lower {
            for i in 0..m {
                let s = (0..i).fold(x.at(i, col), |s, k| s - t.at(i, k) * x.at(k, col));
                x.set(i, col, s / t.at(i, i));
            }
        } else {
            for i in (0..m).rev() {
                let s = (i.saturating_add(1)..m)
                    .fold(x.at(i, col), |s, k| s - t.at(i, k) * x.at(k, col));
                x.set(i, col, s / t.at(i, i));
            }
        }
    }
    x
}

fn triangular_solve(a: &Mat, b: &Mat, o: SolveOpts) -> Result<Mat> {
    let m = a.r;
    // The triangle of a that is read, made explicit (and transposed).
    let mut t = Mat::full(m, m, 0.0)?;
    for i in 0..m {
        for j in 0..m {
            let inside = if o.lower { j <= i } else { j >= i };
            let v = if i == j && o.unit_diagonal {
                1.0
            } else if inside {
                a.at(i, j)
            } else {
                0.0
            };
            if o.transpose_a {
                t.set(j, i, v);
            } else {
                t.set(i, j, v);
            }
        }
    }
    let lower = o.lower != o.transpose_a;
    if o.left_side {
        Ok(substitute(&t, b.clone(), lower))
    } else {
        // x t = b  <=>  tᵀ xᵀ = bᵀ
        substitute(&t.transpose()?, b.transpose()?, !lower).transpose()
    }
}

/// LAPACK `getrf`: returns (packed L\U, pivots, permutation).
pub fn lu(a: &Mat) -> (Mat, Vec<usize>, Vec<usize>) {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut a = a.clone();
    let mut perm: Vec<usize> = (0..m).collect();
    let mut piv: Vec<usize> = Vec::with_capacity(k);
    for j in 0..k {
        let below = j.saturating_add(1);
        let mut p = j;
        let mut best = a.at(j, j).abs();
        for i in below..m {
            let v = a.at(i, j).abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        piv.push(p);
        if a.at(p, j) != 0.0 {
            if p != j {
                a.swap_rows(p, j);
                perm.swap(p, j);
            }
            let d = a.at(j, j);
            for i in below..m {
                a.set(i, j, a.at(i, j) / d);
            }
        }
        for i in below..m {
            let l = a.at(i, j);
            for c in below..n {
                a.set(i, c, a.at(i, c) - l * a.at(j, c));
            }
        }
    }
    (a, piv, perm)
}

/// Householder QR (LAPACK's reflectors `I - tau v vᵀ`, `v[j] = 1`,
/// `beta = -sign(alpha) ||x||`): returns (q, r) with `q` of `qcols` columns
/// and `r` of `rrows` rows.
pub fn qr(a: &Mat, full_matrices: bool) -> Result<(Mat, Mat)> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let mut r = a.clone();
    let mut reflectors: Vec<(Vec<f64>, f64)> = Vec::with_capacity(k);
    for j in 0..k {
        let below = j.saturating_add(1);
        let alpha = r.at(j, j);
        let xnorm = (below..m).fold(0.0_f64, |acc, i| acc.hypot(r.at(i, j)));
        let mut v = vec![0.0; m];
        let mut tau = 0.0;
        if xnorm != 0.0 {
            let beta = -alpha.hypot(xnorm).copysign(alpha);
            tau = (beta - alpha) / beta;
            let scale = 1.0 / (alpha - beta);
            for (i, vi) in v.iter_mut().enumerate().skip(j) {
                *vi = if i == j { 1.0 } else { r.at(i, j) * scale };
            }
            r.set(j, j, beta);
            for i in below..m {
                r.set(i, j, 0.0);
            }
            for c in below..n {
                let w: f64 = (j..m)
                    .map(|i| v.get(i).copied().unwrap_or(0.0) * r.at(i, c))
                    .sum();
                for i in j..m {
                    let vi = v.get(i).copied().unwrap_or(0.0);
                    r.set(i, c, r.at(i, c) - tau * w * vi);
                }
            }
        }
        reflectors.push((v, tau));
    }
    let (qcols, rrows) = if full_matrices { (m, m) } else { (k, k) };
    let mut q = Mat::eye(m, qcols)?;
    for (v, tau) in reflectors.iter().rev() {
        if *tau == 0.0 {
            continue;
        }
        for c in 0..qcols {
            let w: f64 = v.iter().enumerate().map(|(i, vi)| vi * q.at(i, c)).sum();
            for (i, vi) in v.iter().enumerate() {
                q.set(i, c, q.at(i, c) - tau * w * vi);
            }
        }
    }
    Ok((q, r.top_rows(rrows)?))
}

/// Cyclic Jacobi on the symmetric matrix read from one triangle of `a`:
/// returns (eigenvectors in columns, eigenvalues).
fn eigh(a: &Mat, lower: bool, sort: bool) -> Result<(Mat, Vec<f64>)> {
    let n = a.r;
    let mut s = Mat::full(n, n, 0.0)?;
    for i in 0..n {
        for j in 0..n {
            let read_ij = if lower { j <= i } else { j >= i };
            s.set(i, j, if read_ij { a.at(i, j) } else { a.at(j, i) });
        }
    }
    let mut v = Mat::eye(n, n)?;
    for _ in 0..MAX_SWEEPS {
        // Summed separately: `total - diagonal` cancels to zero long before
        // the off-diagonal part is negligible.
        let diag: f64 = (0..n).map(|i| s.at(i, i) * s.at(i, i)).sum();
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|(i, j)| i != j)
            .map(|(i, j)| s.at(i, j) * s.at(i, j))
            .sum();
        let total = diag + off;
        // NaN anywhere ends the iteration (the result stays NaN).
        if off.is_nan() || off <= f64::EPSILON * f64::EPSILON * total {
            break;
        }
        for p in 0..n {
            for q in p.saturating_add(1)..n {
                let apq = s.at(p, q);
                if apq == 0.0 {
                    continue;
                }
                let (c, sn) = jacobi_rotation((s.at(q, q) - s.at(p, p)) / (2.0 * apq));
                s.rotate_cols(p, q, c, sn);
                s.rotate_rows(p, q, c, sn);
                v.rotate_cols(p, q, c, sn);
            }
        }
    }
    let w: Vec<f64> = (0..n).map(|i| s.at(i, i)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    if sort {
        order.sort_by(|&x, &y| {
            let (wx, wy) = (w.get(x).copied(), w.get(y).copied());
            wx.unwrap_or(f64::NAN).total_cmp(&wy.unwrap_or(f64::NAN))
        });
    }
    let mut vs = Mat::full(n, n, 0.0)?;
    for (col, &src) in order.iter().enumerate() {
        for i in 0..n {
            vs.set(i, col, v.at(i, src));
        }
    }
    let ws = order
        .iter()
        .map(|&i| w.get(i).copied().unwrap_or(f64::NAN))
        .collect();
    Ok((vs, ws))
}

/// One-sided Jacobi SVD: returns (s descending, u, vt); `u`/`vt` are empty
/// without `compute_uv`.
pub fn svd(a: &Mat, full_matrices: bool, compute_uv: bool) -> Result<(Vec<f64>, Mat, Mat)> {
    let (m, n) = (a.r, a.c);
    if m < n {
        // aᵀ = u' s vt'  =>  a = vt'ᵀ s u'ᵀ
        let (s, u, vt) = svd(&a.transpose()?, full_matrices, compute_uv)?;
        return Ok((s, vt.transpose()?, u.transpose()?));
    }
    let mut u = a.clone();
    let mut v = Mat::eye(n, n)?;
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p.saturating_add(1)..n {
                let alpha = u.col_dot(p, p);
                let beta = u.col_dot(q, q);
                let gamma = u.col_dot(p, q);
                if gamma == 0.0 || gamma.abs() <= f64::EPSILON * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                let (c, s) = jacobi_rotation((beta - alpha) / (2.0 * gamma));
                u.rotate_cols(p, q, c, s);
                v.rotate_cols(p, q, c, s);
            }
        }
        if !rotated {
            break;
        }
    }
    let norms: Vec<f64> = (0..n).map(|j| u.col_dot(j, j).sqrt()).collect();
    let mut order: Vec<usize> = (0..n).collect();
    let norm_of = |j: usize| norms.get(j).copied().unwrap_or(f64::NAN);
    order.sort_by(|&x, &y| norm_of(y).total_cmp(&norm_of(x)));
    let s: Vec<f64> = order.iter().map(|&j| norm_of(j)).collect();
    if !compute_uv {
        return Ok((s, Mat::full(0, 0, 0.0)?, Mat::full(0, 0, 0.0)?));
    }
    let ucols = if full_matrices { m } else { n };
    let mut uo = Mat::full(m, ucols, 0.0)?;
    let mut vt = Mat::full(n, n, 0.0)?;
    let mut rank = 0usize;
    for (col, &src) in order.iter().enumerate() {
        let sigma = norm_of(src);
        if sigma != 0.0 {
            rank = col.saturating_add(1);
        }
        for i in 0..m {
            uo.set(i, col, u.at(i, src) / sigma);
        }
        for i in 0..n {
            vt.set(col, i, v.at(i, src));
        }
    }
    if rank < ucols {
        // Columns of zero singular values (and the full basis): complete the
        // orthonormal set from a full QR of the determined columns.
        let (q, _) = qr(&uo.left_cols(rank)?, true)?;
        for col in rank..ucols {
            for i in 0..m {
                uo.set(i, col, q.at(i, col));
            }
        }
    }
    Ok((s, uo, vt))
}

/// LAPACK `getrf` of one row-major `r x c` matrix: (packed L\U, pivots,
/// permutation).
pub fn lu_f64(r: usize, c: usize, a: &[f64]) -> (Vec<f64>, Vec<usize>, Vec<usize>) {
    let (f, piv, perm) = lu(&Mat::from_slice(r, c, a));
    (f.d, piv, perm)
}

/// Householder QR of one row-major `r x c` matrix: (q, r) row-major.
pub fn qr_f64(r: usize, c: usize, a: &[f64], full_matrices: bool) -> Result<(Vec<f64>, Vec<f64>)> {
    let (q, rr) = qr(&Mat::from_slice(r, c, a), full_matrices)?;
    Ok((q.d, rr.d))
}

// ----------------------------------------------------------------- kernels

fn to_f64(name: &'static str, a: &HostArray) -> Result<Vec<f64>> {
    match a.buffer() {
        Buffer::F32(v) => Ok(v.iter().map(|&x| f64::from(x)).collect()),
        Buffer::F64(v) => Ok(v.to_vec()),
        other => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32 or float64 operand",
        )),
    }
}

fn from_f64(dtype: DType, v: Vec<f64>) -> Buffer {
    match dtype {
        DType::F32 => Buffer::F32(v.into_iter().map(|x| x as f32).collect()),
        _ => Buffer::F64(v.into()),
    }
}

/// The matrices of a `[..., r, c]` operand.
fn matrices(name: &'static str, a: &HostArray) -> Result<Vec<Mat>> {
    let data = to_f64(name, a)?;
    let [lead @ .., r, c] = a.shape() else {
        return Err(Error::shape(name, &[a.shape()], "requires rank >= 2"));
    };
    let batch = checked_size(lead)?;
    let size = checked_size(&[*r, *c])?;
    (0..batch)
        .map(|i| {
            let start = i.checked_mul(size);
            let slice = start
                .and_then(|s| data.get(s..s.checked_add(size)?))
                .ok_or_else(|| Error::shape(name, &[a.shape()], "buffer smaller than its shape"))?;
            Ok(Mat::from_slice(*r, *c, slice))
        })
        .collect()
}

fn index_i32(name: &'static str, i: usize) -> Result<i32> {
    i32::try_from(i).map_err(|_| Error::Overflow {
        what: name,
        detail: format!("index {i} does not fit int32"),
    })
}

/// Output buffers of one operation under construction: output `k` gathers
/// its values over the batch.
#[derive(Default)]
struct FlatOuts(Vec<Vec<f64>>);

impl FlatOuts {
    /// Appends `vals` to output `k` (creating the outputs up to `k`).
    fn push(&mut self, k: usize, vals: Vec<f64>) {
        while self.0.len() <= k {
            self.0.push(Vec::new());
        }
        if let Some(o) = self.0.get_mut(k) {
            o.extend(vals);
        }
    }
}

/// Output buffers (flat over the batch) of one operation.
pub fn eval_buffers(op: &LinalgOp, args: &[&HostArray], dtype: DType) -> Result<Vec<Buffer>> {
    let name = op.name();
    let mut outs = FlatOuts::default();
    let arg = |i: usize| {
        args.get(i)
            .ok_or(Error::arity(name, i.saturating_add(1), args.len()))
    };
    match *op {
        LinalgOp::Cholesky => {
            for a in matrices(name, arg(0)?)? {
                outs.push(0, cholesky(&a)?.d);
            }
        }
        LinalgOp::TriangularSolve { .. } => {
            let opts = op.solve_opts();
            let bs = matrices(name, arg(1)?)?;
            for (a, b) in matrices(name, arg(0)?)?.iter().zip(&bs) {
                outs.push(0, triangular_solve(a, b, opts)?.d);
            }
        }
        LinalgOp::Lu => return eval_lu(name, arg(0)?, dtype),
        LinalgOp::Qr { full_matrices } => {
            outs.push(1, Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (q, r) = qr(&a, full_matrices)?;
                outs.push(0, q.d);
                outs.push(1, r.d);
            }
        }
        LinalgOp::Eigh {
            lower,
            sort_eigenvalues,
        } => {
            outs.push(1, Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (v, w) = eigh(&a, lower, sort_eigenvalues)?;
                outs.push(0, v.d);
                outs.push(1, w);
            }
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => eval_svd(name, arg(0)?, full_matrices, compute_uv, &mut outs)?,
        LinalgOp::Eig { .. } | LinalgOp::Hessenberg | LinalgOp::Schur { .. } => {
            return Err(super::dense::not_here(name))
        }
    }
    outs.push(0, Vec::new());
    Ok(outs.0.into_iter().map(|v| from_f64(dtype, v)).collect())
}

/// `lu` over the batch: the packed factors, the pivots and the permutation.
fn eval_lu(name: &'static str, x: &HostArray, dtype: DType) -> Result<Vec<Buffer>> {
    let mut outs = FlatOuts::default();
    let (mut piv, mut perm) = (Vec::new(), Vec::new());
    for a in matrices(name, x)? {
        let (f, p, q) = lu(&a);
        outs.push(0, f.d);
        for i in p {
            piv.push(index_i32(name, i)?);
        }
        for i in q {
            perm.push(index_i32(name, i)?);
        }
    }
    let f = outs.0.into_iter().next().unwrap_or_default();
    Ok(vec![
        from_f64(dtype, f),
        Buffer::I32(piv.into()),
        Buffer::I32(perm.into()),
    ])
}

/// `svd` over the batch: the singular values, and `u`, `vt` with
/// `compute_uv`.
fn eval_svd(
    name: &'static str, x: &HostArray, full_matrices: bool, compute_uv: bool, outs: &mut FlatOuts,
) -> Result<()> {
    outs.push(if compute_uv { 2 } else { 0 }, Vec::new());
    for a in matrices(name, x)? {
        let (s, u, vt) = svd(&a, full_matrices, compute_uv)?;
        outs.push(0, s);
        if compute_uv {
            outs.push(1, u.d);
            outs.push(2, vt.d);
        }
    }
    Ok(())
}
