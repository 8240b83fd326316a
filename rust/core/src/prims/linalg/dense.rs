//! The linalg kernels of [`Determinism::Default`](crate::exec::Determinism)
//! on `faer`: Cholesky, triangular solves, partial-pivot LU, Householder
//! QR, the self-adjoint eigendecomposition and the SVD, per matrix of a
//! batched row-major operand, in the operand's own precision.
//!
//! Every kernel is generic over the element type ([`Scalar`]: faer's
//! `ComplexField` plus our buffer variant), so complex dtypes instantiate
//! the same code. faer runs with the constant partition count
//! [`PARTITIONS`] (never the pool's thread count): its parallel loops split
//! the work into that many parts whatever `RAYON_NUM_THREADS` is, so the
//! bits are the same at any thread count.
//!
//! Conventions are LAPACK's, as JAX's CPU results: eigenvalues ascending,
//! singular values descending, LU pivots as `getrf`'s `ipiv` (first largest
//! pivot), QR reflectors `I - τ v vᴴ` with `β = -sign(α)‖x‖`. Two inputs
//! where faer departs from LAPACK go to the hand-written kernels of
//! [`super::portable`]: an LU with an exactly zero pivot (faer scales the
//! column by `1/0`, LAPACK leaves it) and a rank-deficient QR (faer skips
//! negligible columns, a staircase `R`; LAPACK reflects every column), and
//! a QR of a non-finite matrix (faer's rank test skips NaN columns; LAPACK
//! spreads the NaNs). Non-finite inputs give NaN outputs, never errors.

use super::portable;
use super::{LinalgOp, SolveOpts};
use crate::array::{checked_size, Buffer, HostArray};
use crate::error::{Error, Result};
use crate::prims::family::Family;
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::{cholesky, evd, householder, lu, qr, svd, triangular_solve};
use faer::prelude::ReborrowMut;
use faer::traits::math_utils::{is_finite, real};
use faer::traits::ComplexField;
use faer::{Conj, Mat, MatMut, MatRef, Par};
use std::num::NonZeroUsize;

/// faer's partition count: a constant, so results do not depend on the
/// pool's size (the parts still run on the rayon pool's threads).
pub const PARTITIONS: usize = 2;

const PAR: Par = match NonZeroUsize::new(PARTITIONS) {
    Some(n) => Par::Rayon(n),
    None => Par::Seq,
};

/// An element type of the faer kernels: faer's field and the [`Buffer`]
/// variant holding it. The widening to f64 serves the LAPACK-convention
/// fallbacks of [`super::portable`] (real types only).
pub(super) trait Scalar: ComplexField + Copy {
    fn slice(b: &Buffer) -> Option<&[Self]>;
    fn buffer(v: Vec<Self>) -> Buffer;
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
}

impl Scalar for f32 {
    fn slice(b: &Buffer) -> Option<&[f32]> {
        match b {
            Buffer::F32(v) => Some(v),
            _ => None,
        }
    }
    fn buffer(v: Vec<f32>) -> Buffer {
        Buffer::F32(v.into())
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl Scalar for f64 {
    fn slice(b: &Buffer) -> Option<&[f64]> {
        match b {
            Buffer::F64(v) => Some(v),
            _ => None,
        }
    }
    fn buffer(v: Vec<f64>) -> Buffer {
        Buffer::F64(v.into())
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

// ----------------------------------------------------------------- operands

/// A `[..., r, c]` operand: its flat data and matrix size (`r, c > 0`).
struct Stack<'a, T> {
    data: &'a [T],
    r: usize,
    c: usize,
    batch: usize,
}

impl<'a, T: Scalar> Stack<'a, T> {
    fn new(name: &'static str, a: &'a HostArray) -> Result<Stack<'a, T>> {
        let data = T::slice(a.buffer()).ok_or_else(|| {
            Error::dtype(name, &[a.dtype()], "requires a float32 or float64 operand")
        })?;
        let [lead @ .., r, c] = a.shape() else {
            return Err(Error::shape(name, &[a.shape()], "requires rank >= 2"));
        };
        let batch = checked_size(lead)?;
        if checked_size(&[batch, *r, *c])? != data.len() {
            return Err(Error::shape(
                name,
                &[a.shape()],
                "buffer size differs from its shape",
            ));
        }
        Ok(Stack {
            data,
            r: *r,
            c: *c,
            batch,
        })
    }

    /// The matrices, as faer views of the row-major data.
    fn views(&self) -> impl Iterator<Item = MatRef<'a, T>> + 'a {
        let (r, c) = (self.r, self.c);
        self.data
            .chunks_exact(r.saturating_mul(c).max(1))
            .map(move |m| MatRef::from_row_major_slice(m, r, c))
    }
}

/// A zero-filled output of `batch` row-major `r x c` matrices.
struct Out<T> {
    data: Vec<T>,
    r: usize,
    c: usize,
}

impl<T: Scalar> Out<T> {
    fn new(batch: usize, r: usize, c: usize) -> Result<Out<T>> {
        let len = checked_size(&[batch, r, c])?;
        Ok(Out {
            data: vec![T::zero_impl(); len],
            r,
            c,
        })
    }

    /// The output matrices, as mutable faer views.
    fn views(&mut self) -> impl Iterator<Item = MatMut<'_, T>> {
        let (r, c) = (self.r, self.c);
        self.data
            .chunks_exact_mut(r.saturating_mul(c).max(1))
            .map(move |m| MatMut::from_row_major_slice_mut(m, r, c))
    }

    fn buffer(self) -> Buffer {
        T::buffer(self.data)
    }
}

/// A workspace of `req` (reused over the batch).
fn workspace(req: StackReq) -> Result<MemBuffer> {
    MemBuffer::try_new(req).map_err(|_| Error::Overflow {
        what: "linalg",
        detail: format!("workspace of {} bytes", req.size_bytes()),
    })
}

fn all_finite<T: Scalar>(a: MatRef<'_, T>) -> bool {
    a.col_iter().all(|c| c.iter().all(is_finite))
}

/// The lower triangle (with the diagonal) is finite.
fn lower_finite<T: Scalar>(a: MatRef<'_, T>) -> bool {
    a.col_iter()
        .enumerate()
        .all(|(j, c)| c.iter().skip(j).all(is_finite))
}

// ----------------------------------------------------------------- entry

/// Triangular systems up to this many unknowns run the substitution loops
/// of [`super::portable`]: LAPACK's `trsv`/`trsm` divide by the diagonal,
/// faer multiplies by its reciprocal (one more rounding), and at these sizes
/// the plain loop is as fast and gives LAPACK's (and so JAX's) last bits.
const SMALL_SOLVE: usize = 32;

/// Output buffers (flat over the batch) of `op`, or `None` where the
/// portable kernels compute it: an operand with an empty matrix dimension,
/// or a small triangular solve ([`SMALL_SOLVE`]).
pub(super) fn eval_buffers(op: &LinalgOp, args: &[&HostArray]) -> Result<Option<Vec<Buffer>>> {
    let name = op.name();
    let empty = args
        .iter()
        .any(|a| a.shape().iter().rev().take(2).any(|&d| d == 0));
    let small_solve = matches!(op, LinalgOp::TriangularSolve { .. })
        && args
            .first()
            .and_then(|a| a.shape().last())
            .is_some_and(|&m| m <= SMALL_SOLVE);
    if empty || small_solve {
        return Ok(None);
    }
    match args.first().map(|a| a.buffer()) {
        Some(Buffer::F32(_)) => eval_typed::<f32>(op, args).map(Some),
        Some(Buffer::F64(_)) => eval_typed::<f64>(op, args).map(Some),
        Some(other) => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32 or float64 operand",
        )),
        None => Err(Error::arity(name, 1, 0)),
    }
}

fn eval_typed<T: Scalar>(op: &LinalgOp, args: &[&HostArray]) -> Result<Vec<Buffer>>
where
    T::Real: Scalar,
{
    let name = op.name();
    let arg = |i: usize| -> Result<Stack<'_, T>> {
        let a = args
            .get(i)
            .ok_or(Error::arity(name, i.saturating_add(1), args.len()))?;
        Stack::new(name, a)
    };
    match *op {
        LinalgOp::Cholesky => Ok(vec![cholesky_all(&arg(0)?)?.buffer()]),
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            conjugate_a,
            unit_diagonal,
        } => {
            let o = SolveOpts {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
            };
            Ok(vec![solve_all(&arg(0)?, &arg(1)?, o, conjugate_a)?.buffer()])
        }
        LinalgOp::Lu => lu_all(&arg(0)?),
        LinalgOp::Qr { full_matrices } => qr_all(&arg(0)?, full_matrices),
        LinalgOp::Eigh { lower, .. } => eigh_all(&arg(0)?, lower),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => svd_all(&arg(0)?, full_matrices, compute_uv),
    }
}

// ----------------------------------------------------------------- cholesky

/// The lower Cholesky factor of each matrix (its lower triangle is read); a
/// matrix that is not positive definite gives NaNs, as JAX.
fn cholesky_all<T: Scalar>(a: &Stack<'_, T>) -> Result<Out<T>> {
    let n = a.r;
    let req = cholesky::llt::factor::cholesky_in_place_scratch::<T>(n, PAR, Default::default());
    let mut mem = workspace(req)?;
    let mut out = Out::new(a.batch, n, n)?;
    for (src, mut dst) in a.views().zip(out.views()) {
        let mut l = src.to_owned();
        let done = cholesky::llt::factor::cholesky_in_place(
            l.as_mut(),
            Default::default(),
            PAR,
            MemStack::new(&mut mem),
            Default::default(),
        );
        if done.is_ok() && l.diagonal().column_vector().iter().all(is_finite) {
            dst.copy_from_triangular_lower(l.as_ref());
        } else {
            dst.fill(T::nan_impl());
        }
    }
    Ok(out)
}

// ----------------------------------------------------------------- solve

/// `op(a) x = b` (left side) or `x op(a) = b` for each pair of matrices;
/// only the `lower` (or upper) triangle of `a` is read.
fn solve_all<T: Scalar>(
    a: &Stack<'_, T>, b: &Stack<'_, T>, o: SolveOpts, conjugate_a: bool,
) -> Result<Out<T>> {
    let mut out = Out::new(b.batch, b.r, b.c)?;
    let conj = if conjugate_a { Conj::Yes } else { Conj::No };
    for ((t, rhs), mut x) in a.views().zip(b.views()).zip(out.views()) {
        x.copy_from(rhs);
        let mut t = if o.transpose_a { t.transpose() } else { t };
        let mut lower = o.lower != o.transpose_a;
        let mut x = if o.left_side {
            x
        } else {
            // x t = b  <=>  tᵀ xᵀ = bᵀ
            t = t.transpose();
            lower = !lower;
            x.transpose_mut()
        };
        solve_in_place(t, conj, x.as_mut(), lower, o.unit_diagonal);
    }
    Ok(out)
}

fn solve_in_place<T: Scalar>(
    t: MatRef<'_, T>, conj: Conj, x: MatMut<'_, T>, lower: bool, unit: bool,
) {
    use triangular_solve as ts;
    match (lower, unit) {
        (true, false) => ts::solve_lower_triangular_in_place_with_conj(t, conj, x, PAR),
        (true, true) => ts::solve_unit_lower_triangular_in_place_with_conj(t, conj, x, PAR),
        (false, false) => ts::solve_upper_triangular_in_place_with_conj(t, conj, x, PAR),
        (false, true) => ts::solve_unit_upper_triangular_in_place_with_conj(t, conj, x, PAR),
    }
}

// ----------------------------------------------------------------- lu

fn index_i32(i: usize) -> Result<i32> {
    i32::try_from(i).map_err(|_| Error::Overflow {
        what: "lu",
        detail: format!("index {i} does not fit int32"),
    })
}

/// `getrf`'s pivots from the final row permutation (`perm[i]`: the input
/// row that ends in row `i`): step `j` swaps row `j` with the row that
/// holds `perm[j]` at that point.
fn pivots_of(perm: &[usize], piv: &mut Vec<usize>, k: usize) {
    let m = perm.len();
    let mut at: Vec<usize> = (0..m).collect(); // position -> input row
    let mut pos: Vec<usize> = (0..m).collect(); // input row -> position
    for (j, &row) in perm.iter().enumerate().take(k) {
        let p = pos.get(row).copied().unwrap_or(j);
        piv.push(p);
        at.swap(j, p);
        for q in [j, p] {
            if let Some(&r) = at.get(q) {
                if let Some(slot) = pos.get_mut(r) {
                    *slot = q;
                }
            }
        }
    }
}

/// Partial-pivot LU of each matrix: `(packed L\U, pivots, permutation)`.
fn lu_all<T: Scalar>(a: &Stack<'_, T>) -> Result<Vec<Buffer>> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let req = lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
        m,
        n,
        PAR,
        Default::default(),
    );
    let mut mem = workspace(req)?;
    let mut out = Out::new(a.batch, m, n)?;
    let mut piv = Vec::with_capacity(checked_size(&[a.batch, k])?);
    let mut perm_all = Vec::with_capacity(checked_size(&[a.batch, m])?);
    let (mut perm, mut perm_inv) = (vec![0usize; m], vec![0usize; m]);
    for (src, mut dst) in a.views().zip(out.views()) {
        let mut f = src.to_owned();
        lu::partial_pivoting::factor::lu_in_place(
            f.as_mut(),
            &mut perm,
            &mut perm_inv,
            PAR,
            MemStack::new(&mut mem),
            Default::default(),
        );
        let zero_pivot = f
            .diagonal()
            .column_vector()
            .iter()
            .any(|d| *d == T::zero_impl());
        if zero_pivot || (!all_finite(f.as_ref()) && all_finite(src)) {
            // LAPACK leaves a zero pivot's column unscaled; faer divides.
            let (lu, p, q) = portable::lu_f64(m, n, &widen(src));
            dst.copy_from(MatRef::from_row_major_slice(&narrow::<T>(&lu), m, n));
            piv.extend(p);
            perm_all.extend(q);
            continue;
        }
        dst.copy_from(f.as_ref());
        pivots_of(&perm, &mut piv, k);
        perm_all.extend_from_slice(&perm);
    }
    let ints = |v: Vec<usize>| -> Result<Buffer> {
        let v: Result<Vec<i32>> = v.into_iter().map(index_i32).collect();
        Ok(Buffer::I32(v?.into()))
    };
    Ok(vec![out.buffer(), ints(piv)?, ints(perm_all)?])
}

/// A real matrix as row-major f64 (the portable kernels' input).
fn widen<T: Scalar>(a: MatRef<'_, T>) -> Vec<f64> {
    a.row_iter()
        .flat_map(|r| r.iter().map(|x| x.to_f64()).collect::<Vec<f64>>())
        .collect()
}

fn narrow<T: Scalar>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

// ----------------------------------------------------------------- qr

/// Householder QR of each matrix: `q` (`m x m` with `full_matrices`, else
/// `m x k`) and `r` (`m x n`, else `k x n`).
fn qr_all<T: Scalar>(a: &Stack<'_, T>, full_matrices: bool) -> Result<Vec<Buffer>> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let (qcols, rrows) = if full_matrices { (m, m) } else { (k, k) };
    let bs = qr::no_pivoting::factor::recommended_block_size::<T>(m, n);
    let req = StackReq::any_of(&[
        qr::no_pivoting::factor::qr_in_place_scratch::<T>(m, n, bs, PAR, Default::default()),
        householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
            m, bs, qcols,
        ),
    ]);
    let mut mem = workspace(req)?;
    let mut q_out = Out::new(a.batch, m, qcols)?;
    let mut r_out = Out::new(a.batch, rrows, n)?;
    let mut coeff = Mat::<T>::zeros(bs, k);
    for ((src, mut q), mut r) in a.views().zip(q_out.views()).zip(r_out.views()) {
        let mut f = src.to_owned();
        let info = qr::no_pivoting::factor::qr_in_place(
            f.as_mut(),
            coeff.as_mut(),
            PAR,
            MemStack::new(&mut mem),
            Default::default(),
        );
        if info.rank < k || !all_finite(src) {
            let (qv, rv) = portable::qr_f64(m, n, &widen(src), full_matrices)?;
            q.copy_from(MatRef::from_row_major_slice(&narrow::<T>(&qv), m, qcols));
            r.copy_from(MatRef::from_row_major_slice(&narrow::<T>(&rv), rrows, n));
            continue;
        }
        r.copy_from(f.as_ref().subrows(0, rrows));
        for (j, col) in r.rb_mut().col_iter_mut().enumerate() {
            col.iter_mut()
                .skip(j.saturating_add(1))
                .for_each(|x| *x = T::zero_impl());
        }
        q.fill(T::zero_impl());
        q.rb_mut().diagonal_mut().fill(T::one_impl());
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            f.as_ref().subcols(0, k),
            coeff.as_ref(),
            Conj::No,
            q,
            PAR,
            MemStack::new(&mut mem),
        );
    }
    Ok(vec![q_out.buffer(), r_out.buffer()])
}

// ----------------------------------------------------------------- eigh

/// Eigendecomposition of each self-adjoint matrix (read from its `lower` or
/// upper triangle): eigenvectors in columns, eigenvalues ascending.
fn eigh_all<T: Scalar>(a: &Stack<'_, T>, lower: bool) -> Result<Vec<Buffer>>
where
    T::Real: Scalar,
{
    let n = a.r;
    let req = evd::self_adjoint_evd_scratch::<T>(
        n,
        evd::ComputeEigenvectors::Yes,
        PAR,
        Default::default(),
    );
    let mut mem = workspace(req)?;
    let mut v_out = Out::<T>::new(a.batch, n, n)?;
    let mut w_out = Out::<T::Real>::new(a.batch, 1, n)?;
    let mut s = Diag::<T>::zeros(n);
    let mut u = Mat::<T>::zeros(n, n);
    for ((src, mut v), mut w) in a.views().zip(v_out.views()).zip(w_out.views()) {
        // faer reads the lower triangle: the upper one is the adjoint's.
        let h = if lower {
            src.to_owned()
        } else {
            src.adjoint().to_owned()
        };
        let done = lower_finite(h.as_ref())
            && evd::self_adjoint_evd(
                h.as_ref(),
                s.as_mut(),
                Some(u.as_mut()),
                PAR,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .is_ok();
        if done {
            v.copy_from(u.as_ref());
            let vals = s.column_vector().iter().map(real);
            for (dst, x) in w.row_mut(0).iter_mut().zip(vals) {
                *dst = x;
            }
        } else {
            v.fill(T::nan_impl());
            w.fill(T::Real::nan_impl());
        }
    }
    Ok(vec![v_out.buffer(), w_out.buffer()])
}

// ----------------------------------------------------------------- svd

/// SVD of each matrix: `s` descending, and `u`, `vt` with `compute_uv`
/// (`m x m`, `n x n` with `full_matrices`, else `m x k`, `k x n`).
fn svd_all<T: Scalar>(
    a: &Stack<'_, T>, full_matrices: bool, compute_uv: bool,
) -> Result<Vec<Buffer>>
where
    T::Real: Scalar,
{
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let (ucols, vrows) = if full_matrices { (m, n) } else { (k, k) };
    let want = match (compute_uv, full_matrices) {
        (false, _) => svd::ComputeSvdVectors::No,
        (true, true) => svd::ComputeSvdVectors::Full,
        (true, false) => svd::ComputeSvdVectors::Thin,
    };
    let req = svd::svd_scratch::<T>(m, n, want, want, PAR, Default::default());
    let mut mem = workspace(req)?;
    let mut s_out = Out::<T::Real>::new(a.batch, 1, k)?;
    let uv_batch = if compute_uv { a.batch } else { 0 };
    let mut u_out = Out::<T>::new(uv_batch, m, ucols)?;
    let mut vt_out = Out::<T>::new(uv_batch, vrows, n)?;
    let mut s = Diag::<T>::zeros(k);
    let (uc, vc) = if compute_uv { (ucols, vrows) } else { (0, 0) };
    let mut u = Mat::<T>::zeros(m, uc);
    let mut v = Mat::<T>::zeros(n, vc);
    let mut uv_views = u_out.views().zip(vt_out.views());
    for (src, mut sv) in a.views().zip(s_out.views()) {
        let done = all_finite(src)
            && svd::svd(
                src,
                s.as_mut(),
                compute_uv.then(|| u.as_mut()),
                compute_uv.then(|| v.as_mut()),
                PAR,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .is_ok();
        if done {
            for (dst, x) in sv.row_mut(0).iter_mut().zip(s.column_vector().iter()) {
                *dst = real(x);
            }
        } else {
            sv.fill(T::Real::nan_impl());
            u.fill(T::nan_impl());
            v.fill(T::nan_impl());
        }
        if let Some((mut ud, mut vtd)) = uv_views.next() {
            ud.copy_from(u.as_ref());
            vtd.copy_from(v.adjoint());
        }
    }
    drop(uv_views);
    if !compute_uv {
        return Ok(vec![s_out.buffer()]);
    }
    Ok(vec![s_out.buffer(), u_out.buffer(), vt_out.buffer()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(op: LinalgOp, shape: &[usize], v: Vec<f32>) -> Result<Vec<Buffer>> {
        let a = HostArray::new(shape.to_vec(), Buffer::F32(v.into()))?;
        eval_buffers(&op, &[&a])?.ok_or_else(|| Error::InvalidArgument("empty".into()))
    }

    fn f32s(b: &Buffer) -> Vec<f32> {
        match b {
            Buffer::F32(v) => v.to_vec(),
            _ => Vec::new(),
        }
    }

    fn i32s(b: &Buffer) -> Vec<i32> {
        match b {
            Buffer::I32(v) => v.to_vec(),
            _ => Vec::new(),
        }
    }

    /// A zero pivot leaves its column unscaled, as `getrf` (recorded from
    /// JAX 0.10.2: pivots [0, 2, 2], permutation [0, 2, 1]).
    #[test]
    fn lu_zero_pivot_follows_getrf() -> Result<()> {
        let a = vec![0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 7.0];
        let outs = run(LinalgOp::Lu, &[3, 3], a)?;
        let [lu, piv, perm] = outs.as_slice() else {
            return Err(Error::InvalidArgument("three outputs".into()));
        };
        let want = [0.0, 1.0, 2.0, 0.0, 5.0, 7.0, 0.0, 0.6, -0.2];
        let got = f32s(lu);
        assert!(
            got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-5),
            "{got:?}"
        );
        assert_eq!(i32s(piv), vec![0, 2, 2]);
        assert_eq!(i32s(perm), vec![0, 2, 1]);
        Ok(())
    }

    /// `getrf`'s pivots from faer's permutation on a matrix with row swaps.
    #[test]
    fn lu_pivots_match_getrf() -> Result<()> {
        let a = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0];
        let outs = run(LinalgOp::Lu, &[3, 3], a)?;
        assert_eq!(outs.get(1).map(i32s), Some(vec![2, 2, 2]));
        assert_eq!(outs.get(2).map(i32s), Some(vec![2, 0, 1]));
        Ok(())
    }

    /// NaN anywhere gives NaN outputs (no error, no hang).
    #[test]
    fn non_finite_inputs_give_nans() -> Result<()> {
        let a = vec![4.0, f32::NAN, 0.0, f32::NAN, 3.0, 1.0, 0.0, 1.0, 2.0];
        let ops = [
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
            let outs = run(op, &[3, 3], a.clone())?;
            let first = outs.first().map(f32s).unwrap_or_default();
            assert!(first.iter().any(|x| x.is_nan()), "{op:?}: {first:?}");
        }
        Ok(())
    }
}
