//! Dense linear algebra with `jax.lax.linalg`'s primitives, names, params and
//! output conventions: `cholesky`, `triangular_solve`, `lu`, `qr`, `eigh` and
//! `svd` (shape, kernel, params and transformation rules).
//!
//! Every operand is a stack of matrices `[..., m, n]` (leading batch
//! dimensions), float32 or float64. The kernels are plain deterministic
//! algorithms evaluated in f64 (float32 inputs are widened and the results
//! rounded once): Cholesky–Banachiewicz, LAPACK-style partial-pivot LU
//! (`getrf`: first largest pivot, zero pivots leave the column unscaled),
//! Householder QR with LAPACK's reflector convention (`geqrf`/`orgqr`), cyclic
//! Jacobi for `eigh` and one-sided (Hestenes) Jacobi for `svd`. Failures
//! follow LAPACK/JAX: a matrix that is not positive definite gives a Cholesky
//! factor of NaNs, a singular triangular solve gives infinities/NaNs; nothing
//! is an error except shapes and dtypes.
//!
//! JVP rules follow JAX's derivations and are emitted with existing
//! primitives (`dot_general`, `triangular_solve`, masks from `iota`), so their
//! tangent parts are linear and transpose with the existing rules;
//! `triangular_solve` is linear in `b` and transposes to a solve with
//! `transpose_a` flipped. Batching moves the mapped axis to the front.

use super::family::{emit, emit1, BatchOut, Family, JvpOut, Operand, TransposeOut};
use super::params::{Lookup, Param, ParamList};
use super::{BinaryOp, CmpOp, DotDims, Primitive, ReduceOp};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Effect, Literal, Scalar};

/// The primitives of this family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinalgOp {
    /// `cholesky(a) -> l`: lower factor of `a` (only its lower triangle is read).
    Cholesky,
    /// `triangular_solve(a, b) -> x` with `op(a) x = b` (left side) or
    /// `x op(a) = b`; only the `lower` (or upper) triangle of `a` is read.
    TriangularSolve {
        left_side: bool,
        lower: bool,
        transpose_a: bool,
        conjugate_a: bool,
        unit_diagonal: bool,
    },
    /// `lu(a) -> (lu, pivots int32[..., min(m, n)], permutation int32[..., m])`.
    Lu,
    /// `qr(a) -> (q, r)`.
    Qr { full_matrices: bool },
    /// `eigh(a) -> (v, w)`: eigenvectors in columns, eigenvalues ascending
    /// when `sort_eigenvalues`.
    Eigh { lower: bool, sort_eigenvalues: bool },
    /// `svd(a) -> (s, u, vt)`, or `(s,)` without `compute_uv`.
    Svd {
        full_matrices: bool,
        compute_uv: bool,
    },
}

// ----------------------------------------------------------------- params

fn flag(p: &Lookup, key: &'static str, default: bool) -> Result<bool> {
    Ok(p.opt_bool(key)?.unwrap_or(default))
}

/// Params JAX has that we accept only at their default (`None`/`False`).
fn only_default(prim: &'static str, p: &Lookup, key: &'static str) -> Result<()> {
    match p.get(key) {
        None | Some(Param::None) | Some(Param::Bool(false)) => Ok(()),
        Some(other) => Err(Error::param(
            prim,
            key,
            format!("only the default is supported, got {other:?}"),
        )),
    }
}

// ----------------------------------------------------------------- shape

/// `(batch dims, rows, cols)` of a float32/float64 operand of rank >= 2.
fn matrix_dims<'a>(name: &'static str, a: &'a Aval) -> Result<(&'a [usize], usize, usize)> {
    if !matches!(a.dtype, DType::F32 | DType::F64) {
        return Err(Error::dtype(
            name,
            &[a.dtype],
            "requires a float32 or float64 operand",
        ));
    }
    match a.shape.as_slice() {
        [lead @ .., m, n] => Ok((lead, *m, *n)),
        _ => Err(Error::shape(
            name,
            &[&a.shape],
            "requires an operand of rank >= 2 (a stack of matrices)",
        )),
    }
}

fn square_dims<'a>(name: &'static str, a: &'a Aval) -> Result<(&'a [usize], usize)> {
    let (lead, m, n) = matrix_dims(name, a)?;
    if m != n {
        return Err(Error::shape(
            name,
            &[&a.shape],
            "requires square matrices in the last two dimensions",
        ));
    }
    Ok((lead, n))
}

fn with_tail(lead: &[usize], tail: &[usize]) -> Vec<usize> {
    lead.iter().chain(tail).copied().collect()
}

fn one_operand<'a>(name: &'static str, ins: &'a [Aval]) -> Result<&'a Aval> {
    match ins {
        [a] => Ok(a),
        _ => Err(Error::Arity {
            prim: name,
            expected: 1,
            got: ins.len(),
        }),
    }
}

/// The output aval of `triangular_solve(a, b)`.
fn solve_aval(name: &'static str, left_side: bool, ins: &[Aval]) -> Result<Aval> {
    let [a, b] = ins else {
        return Err(Error::Arity {
            prim: name,
            expected: 2,
            got: ins.len(),
        });
    };
    let (a_lead, m) = square_dims(name, a)?;
    let (b_lead, br, bc) = matrix_dims(name, b)?;
    if a.dtype != b.dtype {
        return Err(Error::dtype(
            name,
            &[a.dtype, b.dtype],
            "a and b must have the same dtype",
        ));
    }
    let solved = if left_side { br } else { bc };
    if a_lead != b_lead || solved != m {
        return Err(Error::shape(
            name,
            &[&a.shape, &b.shape],
            "a must be [..., m, m] and b [..., m, n] (left_side) or [..., n, m] with equal batch dimensions",
        ));
    }
    Ok(Aval::new(b.shape.clone(), b.dtype))
}

// ----------------------------------------------------------------- matrices

/// A dense row-major f64 matrix. Indices are always below `r`/`c` (loops run
/// over `0..r`, `0..c`), so the flat offset `i * c + j` is below `d.len()`.
#[derive(Debug, Clone)]
struct Mat {
    r: usize,
    c: usize,
    d: Vec<f64>,
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

    fn eye(r: usize, c: usize) -> Result<Mat> {
        let mut m = Mat::full(r, c, 0.0)?;
        for i in 0..r.min(c) {
            m.set(i, i, 1.0);
        }
        Ok(m)
    }

    fn from_slice(r: usize, c: usize, d: &[f64]) -> Mat {
        Mat {
            r,
            c,
            d: d.to_vec(),
        }
    }

    fn idx(&self, i: usize, j: usize) -> usize {
        i.wrapping_mul(self.c).wrapping_add(j)
    }

    fn at(&self, i: usize, j: usize) -> f64 {
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

    fn col_dot(&self, p: usize, q: usize) -> f64 {
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

#[derive(Debug, Clone, Copy)]
struct SolveOpts {
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    unit_diagonal: bool,
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
fn lu(a: &Mat) -> (Mat, Vec<usize>, Vec<usize>) {
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
fn qr(a: &Mat, full_matrices: bool) -> Result<(Mat, Mat)> {
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
fn svd(a: &Mat, full_matrices: bool, compute_uv: bool) -> Result<(Vec<f64>, Mat, Mat)> {
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

// ----------------------------------------------------------------- kernels

fn to_f64(name: &'static str, a: &HostArray) -> Result<Vec<f64>> {
    match a.buffer() {
        Buffer::F32(v) => Ok(v.iter().map(|&x| f64::from(x)).collect()),
        Buffer::F64(v) => Ok(v.clone()),
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
        _ => Buffer::F64(v),
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

/// Output buffers (flat over the batch) of one operation.
fn eval_buffers(op: &LinalgOp, args: &[&HostArray], dtype: DType) -> Result<Vec<Buffer>> {
    let name = op.name();
    let mut outs: Vec<Vec<f64>> = Vec::new();
    let mut push = |k: usize, vals: Vec<f64>| {
        while outs.len() <= k {
            outs.push(Vec::new());
        }
        if let Some(o) = outs.get_mut(k) {
            o.extend(vals);
        }
    };
    let arg = |i: usize| {
        args.get(i).ok_or(Error::Arity {
            prim: name,
            expected: i.saturating_add(1),
            got: args.len(),
        })
    };
    match *op {
        LinalgOp::Cholesky => {
            for a in matrices(name, arg(0)?)? {
                push(0, cholesky(&a)?.d);
            }
        }
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
            ..
        } => {
            let opts = SolveOpts {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
            };
            let bs = matrices(name, arg(1)?)?;
            for (a, b) in matrices(name, arg(0)?)?.iter().zip(&bs) {
                push(0, triangular_solve(a, b, opts)?.d);
            }
        }
        LinalgOp::Lu => {
            let (mut piv, mut perm) = (Vec::new(), Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (f, p, q) = lu(&a);
                push(0, f.d);
                for i in p {
                    piv.push(index_i32(name, i)?);
                }
                for i in q {
                    perm.push(index_i32(name, i)?);
                }
            }
            let f = outs.into_iter().next().unwrap_or_default();
            return Ok(vec![
                from_f64(dtype, f),
                Buffer::I32(piv),
                Buffer::I32(perm),
            ]);
        }
        LinalgOp::Qr { full_matrices } => {
            push(1, Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (q, r) = qr(&a, full_matrices)?;
                push(0, q.d);
                push(1, r.d);
            }
        }
        LinalgOp::Eigh {
            lower,
            sort_eigenvalues,
        } => {
            push(1, Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (v, w) = eigh(&a, lower, sort_eigenvalues)?;
                push(0, v.d);
                push(1, w);
            }
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => {
            push(if compute_uv { 2 } else { 0 }, Vec::new());
            for a in matrices(name, arg(0)?)? {
                let (s, u, vt) = svd(&a, full_matrices, compute_uv)?;
                push(0, s);
                if compute_uv {
                    push(1, u.d);
                    push(2, vt.d);
                }
            }
        }
    }
    push(0, Vec::new());
    Ok(outs.into_iter().map(|v| from_f64(dtype, v)).collect())
}

// ----------------------------------------------------------------- graph helpers

fn nth(outs: &[Atom], i: usize) -> Result<Atom> {
    outs.get(i)
        .cloned()
        .ok_or_else(|| Error::InvalidArgument(format!("linalg: missing output {i}")))
}

/// `(shape, number of batch dims)` of a matrix-stack atom.
fn stack(b: &Builder, x: &Atom) -> Result<(Aval, usize)> {
    let aval = b.aval(x)?;
    let nb = aval.ndim().checked_sub(2).ok_or_else(|| {
        Error::shape("linalg", &[&aval.shape], "requires an operand of rank >= 2")
    })?;
    Ok((aval, nb))
}

/// Batched `x @ y` over the last two dimensions.
fn mm(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    let (_, nb) = stack(b, &x)?;
    let batch: Vec<usize> = (0..nb).collect();
    let dims = DotDims {
        lhs_contract: vec![nb.saturating_add(1)],
        rhs_contract: vec![nb],
        lhs_batch: batch.clone(),
        rhs_batch: batch,
    };
    b.add_eqn1(
        Primitive::DotGeneral {
            dims,
            preferred_element_type: None,
        },
        vec![x, y],
    )
}

/// Swaps the last two dimensions.
fn mt(b: &mut Builder, x: Atom) -> Result<Atom> {
    let (_, nb) = stack(b, &x)?;
    let mut permutation: Vec<usize> = (0..nb).collect();
    permutation.extend([nb.saturating_add(1), nb]);
    b.add_eqn1(Primitive::Transpose { permutation }, vec![x])
}

fn add(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    b.binary(BinaryOp::Add, x, y)
}

fn sub(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    b.binary(BinaryOp::Sub, x, y)
}

fn mul(b: &mut Builder, x: Atom, y: Atom) -> Result<Atom> {
    b.binary(BinaryOp::Mul, x, y)
}

fn int_lit(k: i64) -> Atom {
    Builder::literal(Literal::new(Scalar::Int(k), DType::I32, false))
}

/// A float mask of `shape` (a matrix stack) whose entry `(i, j)` is one
/// where `cmp(j - i, k)` holds (and, with `min_row`, also `i >= min_row`).
fn mask(
    b: &mut Builder,
    shape: &[usize],
    dtype: DType,
    cmp: CmpOp,
    k: i64,
    min_row: Option<usize>,
) -> Result<Atom> {
    let [.., m, n] = shape else {
        return Err(Error::shape("linalg", &[shape], "requires rank >= 2"));
    };
    let nd = shape.len();
    let iota = |b: &mut Builder, dimension: usize| {
        b.add_eqn1(
            Primitive::Iota {
                dtype: DType::I32,
                shape: vec![*m, *n],
                dimension,
            },
            vec![],
        )
    };
    let rows = iota(b, 0)?;
    let cols = iota(b, 1)?;
    let diff = sub(b, cols, rows.clone())?;
    let mut pred = b.add_eqn1(Primitive::Compare(cmp), vec![diff, int_lit(k)])?;
    if let Some(r) = min_row {
        let r = i64::try_from(r).unwrap_or(i64::MAX);
        let ok = b.add_eqn1(Primitive::Compare(CmpOp::Ge), vec![rows, int_lit(r)])?;
        pred = b.binary(BinaryOp::And, pred, ok)?;
    }
    let f = b.add_eqn1(
        Primitive::ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        },
        vec![pred],
    )?;
    b.add_eqn1(
        Primitive::BroadcastInDim {
            shape: shape.to_vec(),
            broadcast_dimensions: vec![nd.saturating_sub(2), nd.saturating_sub(1)],
        },
        vec![f],
    )
}

/// `tril(x, k)` (lower) or `triu(x, k)`.
fn tri(b: &mut Builder, x: Atom, lower: bool, k: i64) -> Result<Atom> {
    let aval = b.aval(&x)?;
    let cmp = if lower { CmpOp::Le } else { CmpOp::Ge };
    let m = mask(b, &aval.shape, aval.dtype, cmp, k, None)?;
    mul(b, x, m)
}

fn eye(b: &mut Builder, shape: &[usize], dtype: DType) -> Result<Atom> {
    mask(b, shape, dtype, CmpOp::Eq, 0, None)
}

/// The diagonal of a square matrix stack `[..., n, n] -> [..., n]`.
fn diag(b: &mut Builder, x: Atom) -> Result<Atom> {
    let aval = b.aval(&x)?;
    let e = eye(b, &aval.shape, aval.dtype)?;
    let xe = mul(b, x, e)?;
    b.add_eqn1(
        Primitive::Reduce {
            op: ReduceOp::Sum,
            axes: vec![aval.ndim().saturating_sub(1)],
        },
        vec![xe],
    )
}

/// A vector stack `[..., k]` spread over `[..., r, c]`: along the columns
/// (`row = true`: entry `(i, j)` is `v[j]`) or along the rows (`v[i]`).
fn spread(b: &mut Builder, v: Atom, r: usize, c: usize, row: bool) -> Result<Atom> {
    let aval = b.aval(&v)?;
    let nb = aval.ndim().saturating_sub(1);
    let mut shape: Vec<usize> = aval.shape.get(..nb).unwrap_or_default().to_vec();
    shape.extend([r, c]);
    let mut broadcast_dimensions: Vec<usize> = (0..nb).collect();
    broadcast_dimensions.push(if row { nb.saturating_add(1) } else { nb });
    b.add_eqn1(
        Primitive::BroadcastInDim {
            shape,
            broadcast_dimensions,
        },
        vec![v],
    )
}

fn recip(b: &mut Builder, x: Atom) -> Result<Atom> {
    let dtype = b.aval(&x)?.dtype;
    b.binary(BinaryOp::Div, Builder::lit(dtype, 1.0), x)
}

fn slice_last2(b: &mut Builder, x: Atom, rows: usize, cols: usize) -> Result<Atom> {
    let (aval, nb) = stack(b, &x)?;
    let mut limit = aval.shape.clone();
    if let Some(l) = limit.get_mut(nb) {
        *l = rows;
    }
    if let Some(l) = limit.get_mut(nb.saturating_add(1)) {
        *l = cols;
    }
    b.add_eqn1(
        Primitive::Slice {
            start_indices: vec![0; aval.ndim()],
            limit_indices: limit,
            strides: None,
        },
        vec![x],
    )
}

/// Pads the last two dimensions with zeros at the high end.
fn pad_last2(b: &mut Builder, x: Atom, rows: usize, cols: usize) -> Result<Atom> {
    let (aval, nb) = stack(b, &x)?;
    let hi = |want: usize, have: Option<&usize>| {
        i64::try_from(want.saturating_sub(have.copied().unwrap_or(want))).unwrap_or(0)
    };
    let mut padding_config = vec![(0, 0, 0); nb];
    padding_config.push((0, hi(rows, aval.shape.get(nb)), 0));
    padding_config.push((0, hi(cols, aval.shape.get(nb.saturating_add(1))), 0));
    if padding_config.iter().all(|&p| p == (0, 0, 0)) {
        return Ok(x);
    }
    let zero = Builder::lit(aval.dtype, 0.0);
    b.add_eqn1(Primitive::Pad { padding_config }, vec![x, zero])
}

fn solve(
    b: &mut Builder,
    a: Atom,
    rhs: Atom,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    unit_diagonal: bool,
) -> Result<Atom> {
    emit1(
        b,
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            conjugate_a: false,
            unit_diagonal,
        },
        vec![a, rhs],
    )
}

// ----------------------------------------------------------------- JVP

/// `L̇ = L Φ(L⁻¹ Ȧ L⁻ᵀ)`, Φ = lower triangle with the diagonal halved.
fn jvp_cholesky(b: &mut Builder, x: Atom, t: Atom) -> JvpOut {
    let l = emit1(b, LinalgOp::Cholesky, vec![x])?;
    let tmp = solve(b, l.clone(), t, false, true, true, false)?;
    let inner = solve(b, l.clone(), tmp, true, true, false, false)?;
    let aval = b.aval(&inner)?;
    let strict = tri(b, inner.clone(), true, -1)?;
    let e = eye(b, &aval.shape, aval.dtype)?;
    let half = mul(b, inner, Builder::lit(aval.dtype, 0.5))?;
    let d = mul(b, half, e)?;
    let phi = add(b, strict, d)?;
    let dl = mm(b, l.clone(), phi)?;
    Ok((vec![l], vec![Some(dl)]))
}

/// `op` is the solve itself, `o` its options.
fn jvp_triangular_solve(
    op: LinalgOp,
    o: SolveOpts,
    b: &mut Builder,
    xs: &[Atom],
    ts: &[Option<Atom>],
) -> JvpOut {
    let SolveOpts {
        left_side,
        lower,
        transpose_a,
        unit_diagonal,
    } = o;
    let [a, _] = xs else {
        return Err(Error::Arity {
            prim: "triangular_solve",
            expected: 2,
            got: xs.len(),
        });
    };
    let out = emit1(b, op, xs.to_vec())?;
    let solve_with = |b: &mut Builder, r: Atom| emit1(b, op, vec![a.clone(), r]);
    let mut tout: Option<Atom> = None;
    if let Some(Some(tb)) = ts.get(1) {
        tout = Some(solve_with(b, tb.clone())?);
    }
    if let Some(Some(ta)) = ts.first() {
        // x = op(a)⁻¹ b  =>  ẋ = -op(a)⁻¹ op(ȧ) x (left), -x op(ȧ) op(a)⁻¹ (right).
        let k = i64::from(unit_diagonal);
        let g = tri(
            b,
            ta.clone(),
            lower,
            if lower { k.saturating_neg() } else { k },
        )?;
        let g = b.unary(super::UnaryOp::Neg, g)?;
        let g = if transpose_a { mt(b, g)? } else { g };
        let prod = if left_side {
            mm(b, g, out.clone())?
        } else {
            mm(b, out.clone(), g)?
        };
        let ta_part = solve_with(b, prod)?;
        tout = super::jvp::add_opt(b, tout, Some(ta_part))?;
    }
    Ok((vec![out], vec![tout]))
}

/// Through the triangular factors: with `x = P ȧ`,
/// `L̇ = L tril(L⁻¹ x U⁻¹, -1)`, `U̇ = triu(L⁻¹ x U⁻¹) U`.
fn jvp_lu(b: &mut Builder, a: Atom, t: Atom) -> JvpOut {
    let outs = emit(b, LinalgOp::Lu, vec![a])?;
    let (f, perm) = (nth(&outs, 0)?, nth(&outs, 2)?);
    let (aval, nb) = stack(b, &f)?;
    let (m, n) = (
        aval.shape.get(nb).copied().unwrap_or(0),
        aval.shape.get(nb.saturating_add(1)).copied().unwrap_or(0),
    );
    let k = m.min(n);
    let dt = aval.dtype;
    // P[i, j] = (perm[i] == j)
    let mut sq = aval.shape.get(..nb).unwrap_or_default().to_vec();
    sq.extend([m, m]);
    let pi = spread(b, perm, m, m, false)?;
    let cols = b.add_eqn1(
        Primitive::Iota {
            dtype: DType::I32,
            shape: sq.clone(),
            dimension: nb.saturating_add(1),
        },
        vec![],
    )?;
    let pb = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![pi, cols])?;
    let pm = b.add_eqn1(
        Primitive::ConvertElementType {
            new_dtype: dt,
            weak_type: false,
        },
        vec![pb],
    )?;
    let x = mm(b, pm, t)?;
    let l = slice_last2(b, f.clone(), m, k)?;
    let l = tri(b, l, true, -1)?;
    let l = pad_last2(b, l, m, m)?;
    let em = eye(b, &sq, dt)?;
    let l = add(b, l, em)?;
    let u = slice_last2(b, f.clone(), k, n)?;
    let u = tri(b, u, false, 0)?;
    let u = pad_last2(b, u, n, n)?;
    let u = if n > k {
        let mut nn = aval.shape.get(..nb).unwrap_or_default().to_vec();
        nn.extend([n, n]);
        let ue = mask(b, &nn, dt, CmpOp::Eq, 0, Some(k))?;
        add(b, u, ue)?
    } else {
        u
    };
    let la = solve(b, l.clone(), x, true, true, false, true)?;
    let lau = solve(b, u.clone(), la, false, false, false, false)?;
    let low = tri(b, lau.clone(), true, -1)?;
    let l_dot = mm(b, l, low)?;
    let up = tri(b, lau, false, 0)?;
    let u_dot = mm(b, up, u)?;
    let dlu = add(b, l_dot, u_dot)?;
    Ok((outs, vec![Some(dlu), None, None]))
}

fn jvp_qr(b: &mut Builder, x: Atom, dx: Atom, full_matrices: bool) -> JvpOut {
    let (aval, nb) = stack(b, &x)?;
    let m = aval.shape.get(nb).copied().unwrap_or(0);
    let n = aval.shape.get(nb.saturating_add(1)).copied().unwrap_or(0);
    if m < n || (full_matrices && m != n) {
        return Err(Error::NotImplemented(format!(
            "Unimplemented case of QR decomposition derivative (input shape {})",
            crate::error::format_shape(&aval.shape)
        )));
    }
    let outs = emit(b, LinalgOp::Qr { full_matrices }, vec![x])?;
    let (q, r) = (nth(&outs, 0)?, nth(&outs, 1)?);
    let dx_rinv = solve(b, r.clone(), dx, false, false, false, false)?;
    let qt = mt(b, q.clone())?;
    let qt_dx = mm(b, qt, dx_rinv.clone())?;
    let low = tri(b, qt_dx.clone(), true, -1)?;
    let low_t = mt(b, low.clone())?;
    let skew = sub(b, low, low_t)?;
    let dq_in = sub(b, skew.clone(), qt_dx.clone())?;
    let dq = mm(b, q, dq_in)?;
    let dq = add(b, dq, dx_rinv)?;
    let dr_in = sub(b, qt_dx, skew)?;
    let dr = mm(b, dr_in, r)?;
    Ok((outs, vec![Some(dq), Some(dr)]))
}

/// `ẇ = diag(Vᵀ Ȧ V)`, `V̇ = V (F ∘ Vᵀ Ȧ V)` with `F[i, j] = 1/(w[j] - w[i])`
/// off the diagonal and zero on it.
fn jvp_eigh(op: LinalgOp, b: &mut Builder, a: Atom, t: Atom) -> JvpOut {
    let outs = emit(b, op, vec![a])?;
    let (v, w) = (nth(&outs, 0)?, nth(&outs, 1)?);
    let (aval, nb) = stack(b, &v)?;
    let n = aval.shape.get(nb).copied().unwrap_or(0);
    let e = eye(b, &aval.shape, aval.dtype)?;
    let wj = spread(b, w.clone(), n, n, true)?;
    let wi = spread(b, w, n, n, false)?;
    let diff = sub(b, wj, wi)?;
    let diff = add(b, diff, e.clone())?;
    let f = recip(b, diff)?;
    let f = sub(b, f, e)?;
    let vt = mt(b, v.clone())?;
    let vta = mm(b, vt, t)?;
    let vav = mm(b, vta, v.clone())?;
    let fv = mul(b, f, vav.clone())?;
    let dv = mm(b, v, fv)?;
    let dw = diag(b, vav)?;
    Ok((outs, vec![Some(dv), Some(dw)]))
}

fn jvp_svd(b: &mut Builder, a: Atom, da: Atom, full_matrices: bool, compute_uv: bool) -> JvpOut {
    if compute_uv && full_matrices {
        return Err(Error::NotImplemented(
            "Singular value decomposition JVP not implemented for full matrices".into(),
        ));
    }
    let (aval, nb) = stack(b, &a)?;
    let m = aval.shape.get(nb).copied().unwrap_or(0);
    let n = aval.shape.get(nb.saturating_add(1)).copied().unwrap_or(0);
    let k = m.min(n);
    let dt = aval.dtype;
    let outs = emit(
        b,
        LinalgOp::Svd {
            full_matrices: false,
            compute_uv: true,
        },
        vec![a],
    )?;
    let (s, u, vt) = (nth(&outs, 0)?, nth(&outs, 1)?, nth(&outs, 2)?);
    let ut = mt(b, u.clone())?;
    let v = mt(b, vt.clone())?;
    let uta = mm(b, ut.clone(), da.clone())?;
    let ds_mat = mm(b, uta, v.clone())?;
    let ds = diag(b, ds_mat.clone())?;
    if !compute_uv {
        return Ok((vec![s], vec![Some(ds)]));
    }
    let mut kk = aval.shape.get(..nb).unwrap_or_default().to_vec();
    kk.extend([k, k]);
    let e = eye(b, &kk, dt)?;
    let sj = spread(b, s.clone(), k, k, true)?;
    let si = spread(b, s.clone(), k, k, false)?;
    let sum = add(b, sj.clone(), si.clone())?;
    let dif = sub(b, sj.clone(), si.clone())?;
    let s_diffs = mul(b, sum, dif)?;
    let f = add(b, s_diffs, e.clone())?;
    let f = recip(b, f)?;
    let f = sub(b, f, e.clone())?;
    let dss = mul(b, sj, ds_mat.clone())?;
    let sds = mul(b, si, ds_mat.clone())?;
    let zero_mask = b.add_eqn1(
        Primitive::Compare(CmpOp::Eq),
        vec![s.clone(), Builder::lit(dt, 0.0)],
    )?;
    let s_zeros = b.add_eqn1(
        Primitive::ConvertElementType {
            new_dtype: dt,
            weak_type: false,
        },
        vec![zero_mask],
    )?;
    let s_safe = add(b, s.clone(), s_zeros.clone())?;
    let s_inv = recip(b, s_safe)?;
    let s_inv = sub(b, s_inv, s_zeros)?;
    let s_inv_row = spread(b, s_inv, k, k, true)?;
    let s_inv_mat = mul(b, s_inv_row, e)?;
    let ds_t = mt(b, ds_mat.clone())?;
    let skew = sub(b, ds_mat, ds_t)?;
    let skew = mul(b, skew, Builder::lit(dt, 0.5))?;
    let dudv_diag = mul(b, skew, s_inv_mat)?;
    let dss_t = mt(b, dss.clone())?;
    let sym_u = add(b, dss, dss_t)?;
    let fu = mul(b, f.clone(), sym_u)?;
    let fu = add(b, fu, dudv_diag)?;
    let mut du = mm(b, u.clone(), fu)?;
    let sds_t = mt(b, sds.clone())?;
    let sym_v = add(b, sds, sds_t)?;
    let fv = mul(b, f, sym_v)?;
    let mut dv = mm(b, v.clone(), fv)?;
    if m > n {
        let dav = mm(b, da, v)?;
        let proj = mm(b, ut, dav.clone())?;
        let proj = mm(b, u.clone(), proj)?;
        let rest = sub(b, dav, proj)?;
        let s_cols = spread(b, s.clone(), m, k, true)?;
        let rest = b.binary(BinaryOp::Div, rest, s_cols)?;
        du = add(b, du, rest)?;
    } else if n > m {
        let dat = mt(b, da)?;
        let dahu = mm(b, dat, u.clone())?;
        let proj = mm(b, vt.clone(), dahu.clone())?;
        let proj = mm(b, v, proj)?;
        let rest = sub(b, dahu, proj)?;
        let s_cols = spread(b, s.clone(), n, k, true)?;
        let rest = b.binary(BinaryOp::Div, rest, s_cols)?;
        dv = add(b, dv, rest)?;
    }
    let dvt = mt(b, dv)?;
    Ok((vec![s, u, vt], vec![Some(ds), Some(du), Some(dvt)]))
}

impl Family for LinalgOp {
    const NAMES: &'static [&'static str] =
        &["cholesky", "triangular_solve", "lu", "qr", "eigh", "svd"];

    fn name(&self) -> &'static str {
        match self {
            LinalgOp::Cholesky => "cholesky",
            LinalgOp::TriangularSolve { .. } => "triangular_solve",
            LinalgOp::Lu => "lu",
            LinalgOp::Qr { .. } => "qr",
            LinalgOp::Eigh { .. } => "eigh",
            LinalgOp::Svd { .. } => "svd",
        }
    }

    /// Everything but `cholesky` and `triangular_solve` returns a list.
    fn multiple_results(&self) -> bool {
        !matches!(self, LinalgOp::Cholesky | LinalgOp::TriangularSolve { .. })
    }

    fn effect(&self) -> Effect {
        Effect::None
    }

    /// Params as Python sees them (`eqn.params`), JAX's names.
    fn params(&self) -> ParamList {
        match *self {
            LinalgOp::Cholesky | LinalgOp::Lu => Vec::new(),
            LinalgOp::TriangularSolve {
                left_side,
                lower,
                transpose_a,
                conjugate_a,
                unit_diagonal,
            } => vec![
                ("conjugate_a", Param::Bool(conjugate_a)),
                ("left_side", Param::Bool(left_side)),
                ("lower", Param::Bool(lower)),
                ("transpose_a", Param::Bool(transpose_a)),
                ("unit_diagonal", Param::Bool(unit_diagonal)),
            ],
            LinalgOp::Qr { full_matrices } => vec![
                ("full_matrices", Param::Bool(full_matrices)),
                ("pivoting", Param::Bool(false)),
                ("use_magma", Param::None),
            ],
            LinalgOp::Eigh {
                lower,
                sort_eigenvalues,
            } => vec![
                ("lower", Param::Bool(lower)),
                ("sort_eigenvalues", Param::Bool(sort_eigenvalues)),
                ("subset_by_index", Param::None),
            ],
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => vec![
                ("algorithm", Param::None),
                ("compute_uv", Param::Bool(compute_uv)),
                ("full_matrices", Param::Bool(full_matrices)),
                ("subset_by_index", Param::None),
            ],
        }
    }

    fn from_params(name: &str, p: &Lookup<'_>) -> Result<Option<LinalgOp>> {
        Ok(Some(match name {
            "cholesky" => LinalgOp::Cholesky,
            "lu" => LinalgOp::Lu,
            "triangular_solve" => LinalgOp::TriangularSolve {
                left_side: flag(p, "left_side", false)?,
                lower: flag(p, "lower", false)?,
                transpose_a: flag(p, "transpose_a", false)?,
                conjugate_a: flag(p, "conjugate_a", false)?,
                unit_diagonal: flag(p, "unit_diagonal", false)?,
            },
            "qr" => {
                only_default("qr", p, "pivoting")?;
                LinalgOp::Qr {
                    full_matrices: flag(p, "full_matrices", true)?,
                }
            }
            "eigh" => {
                only_default("eigh", p, "subset_by_index")?;
                LinalgOp::Eigh {
                    lower: flag(p, "lower", true)?,
                    sort_eigenvalues: flag(p, "sort_eigenvalues", true)?,
                }
            }
            "svd" => {
                only_default("svd", p, "subset_by_index")?;
                only_default("svd", p, "algorithm")?;
                LinalgOp::Svd {
                    full_matrices: flag(p, "full_matrices", true)?,
                    compute_uv: flag(p, "compute_uv", true)?,
                }
            }
            _ => return Ok(None),
        }))
    }

    fn display_params(&self, _params: &mut ParamList) {}

    fn examples() -> Vec<LinalgOp> {
        vec![
            LinalgOp::Cholesky,
            LinalgOp::TriangularSolve {
                left_side: true,
                lower: true,
                transpose_a: false,
                conjugate_a: false,
                unit_diagonal: false,
            },
            LinalgOp::Lu,
            LinalgOp::Qr {
                full_matrices: false,
            },
            LinalgOp::Eigh {
                lower: true,
                sort_eigenvalues: true,
            },
            LinalgOp::Svd {
                full_matrices: false,
                compute_uv: true,
            },
        ]
    }

    fn abstract_eval(&self, ins: &[Aval]) -> Result<Vec<Aval>> {
        let name = self.name();
        Ok(match *self {
            LinalgOp::TriangularSolve { left_side, .. } => {
                vec![solve_aval(name, left_side, ins)?]
            }
            LinalgOp::Cholesky => {
                let a = one_operand(name, ins)?;
                square_dims(name, a)?;
                vec![Aval::new(a.shape.clone(), a.dtype)]
            }
            LinalgOp::Lu => {
                let a = one_operand(name, ins)?;
                let (lead, m, n) = matrix_dims(name, a)?;
                vec![
                    Aval::new(a.shape.clone(), a.dtype),
                    Aval::new(with_tail(lead, &[m.min(n)]), DType::I32),
                    Aval::new(with_tail(lead, &[m]), DType::I32),
                ]
            }
            LinalgOp::Qr { full_matrices } => {
                let a = one_operand(name, ins)?;
                let (lead, m, n) = matrix_dims(name, a)?;
                let k = if full_matrices { m } else { m.min(n) };
                vec![
                    Aval::new(with_tail(lead, &[m, k]), a.dtype),
                    Aval::new(with_tail(lead, &[k, n]), a.dtype),
                ]
            }
            LinalgOp::Eigh { .. } => {
                let a = one_operand(name, ins)?;
                let (lead, n) = square_dims(name, a)?;
                vec![
                    Aval::new(a.shape.clone(), a.dtype),
                    Aval::new(with_tail(lead, &[n]), a.dtype),
                ]
            }
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => {
                let a = one_operand(name, ins)?;
                let dt = a.dtype;
                let (lead, m, n) = matrix_dims(name, a)?;
                let k = m.min(n);
                let s = Aval::new(with_tail(lead, &[k]), dt);
                if !compute_uv {
                    return Ok(vec![s]);
                }
                let (uc, vr) = if full_matrices { (m, n) } else { (k, k) };
                vec![
                    s,
                    Aval::new(with_tail(lead, &[m, uc]), dt),
                    Aval::new(with_tail(lead, &[vr, n]), dt),
                ]
            }
        })
    }

    fn kernel(&self, args: &[&HostArray], outs: Vec<Aval>) -> Result<Vec<HostArray>> {
        let dtype = args.first().map_or(DType::F32, |a| a.dtype());
        let bufs = eval_buffers(self, args, dtype)?;
        if bufs.len() != outs.len() {
            return Err(Error::Arity {
                prim: self.name(),
                expected: outs.len(),
                got: bufs.len(),
            });
        }
        bufs.into_iter()
            .zip(outs)
            .map(|(buf, aval)| HostArray::new(aval.shape, buf))
            .collect()
    }

    fn jvp(&self, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>]) -> JvpOut {
        let op = *self;
        let primal_tangent = match (xs.first(), ts.first()) {
            (Some(x), Some(Some(t))) => Some((x.clone(), t.clone())),
            _ => None,
        };
        match (op, primal_tangent) {
            (
                LinalgOp::TriangularSolve {
                    left_side,
                    lower,
                    transpose_a,
                    unit_diagonal,
                    ..
                },
                _,
            ) => {
                let o = SolveOpts {
                    left_side,
                    lower,
                    transpose_a,
                    unit_diagonal,
                };
                jvp_triangular_solve(op, o, b, xs, ts)
            }
            (_, None) => {
                let outs = emit(b, op, xs.to_vec())?;
                let none = vec![None; outs.len()];
                Ok((outs, none))
            }
            (LinalgOp::Cholesky, Some((x, t))) => jvp_cholesky(b, x, t),
            (LinalgOp::Lu, Some((x, t))) => jvp_lu(b, x, t),
            (LinalgOp::Qr { full_matrices }, Some((x, t))) => jvp_qr(b, x, t, full_matrices),
            (LinalgOp::Eigh { .. }, Some((x, t))) => jvp_eigh(op, b, x, t),
            (
                LinalgOp::Svd {
                    full_matrices,
                    compute_uv,
                },
                Some((x, t)),
            ) => jvp_svd(b, x, t, full_matrices, compute_uv),
        }
    }

    /// `triangular_solve` is linear in `b` (with `a` known): its transpose
    /// solves with `transpose_a` flipped.
    fn transpose(&self, b: &mut Builder, cts: &[Option<Atom>], ops: &[Operand]) -> TransposeOut {
        let LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            conjugate_a,
            unit_diagonal,
        } = *self
        else {
            return super::family::transpose_not_linear(self.name());
        };
        let (Some(Operand::Known(a)), Some(Operand::Linear(_))) = (ops.first(), ops.get(1)) else {
            return Err(super::transpose::not_linear_error(
                "triangular_solve",
                " (only b may be linear)",
            ));
        };
        let Some(Some(ct)) = cts.first() else {
            return Ok(vec![None, None]);
        };
        let flipped = LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a: !transpose_a,
            conjugate_a,
            unit_diagonal,
        };
        let ct_b = emit1(b, flipped, vec![a.clone(), ct.clone()])?;
        Ok(vec![None, Some(ct_b)])
    }

    /// Every operand gets the mapped axis in front (the ops take leading
    /// batch dimensions; an unbatched `triangular_solve` operand is
    /// broadcast).
    fn batch(&self, b: &mut Builder, ins: &[Atom], dims: &[Option<usize>], n: usize) -> BatchOut {
        let op = *self;
        if dims.iter().all(Option::is_none) {
            let outs = emit(b, op, ins.to_vec())?;
            let d = vec![None; outs.len()];
            return Ok((outs, d));
        }
        let mut front: Vec<Atom> = Vec::with_capacity(ins.len());
        for (x, d) in ins.iter().zip(dims) {
            front.push(match d {
                Some(d) => super::batch::move_axis(b, x.clone(), *d, 0)?,
                None => super::batch::add_batch_axis(b, x.clone(), n, 0)?,
            });
        }
        let outs = emit(b, op, front)?;
        let d = vec![Some(0); outs.len()];
        Ok((outs, d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
