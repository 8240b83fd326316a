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
//! bits are the same at any thread count. Cholesky, LU, QR and triangular
//! solves of matrices at most [`SEQ_MAX`] wide run sequentially (there the
//! rayon hand-offs cost more than they save); the choice depends on the
//! size only, never on the pool.
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

use super::{lapack, portable};
use super::{LinalgOp, SolveOpts};
use crate::array::{checked_size, Buffer, HostArray};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::prims::family::Family;
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::{cholesky, evd, householder, lu, qr, svd, triangular_solve};
use faer::prelude::ReborrowMut;
use faer::traits::math_utils::{is_finite, real};
use faer::traits::ComplexField;
use faer::{c32, c64, Conj, Mat, MatMut, MatRef, Par};
use std::num::NonZeroUsize;

/// faer's partition count: a constant, so results do not depend on the
/// pool's size (the parts still run on the rayon pool's threads).
pub const PARTITIONS: usize = 2;

pub const PAR: Par = match NonZeroUsize::new(PARTITIONS) {
    Some(n) => Par::Rayon(n),
    None => Par::Seq,
};

/// The widest matrix whose Cholesky, LU, QR or triangular solve runs
/// sequentially.
pub const SEQ_MAX: usize = 256;

/// faer's parallelism for a factorization or solve of a matrix `width`
/// wide: sequential up to [`SEQ_MAX`], else [`PAR`] (a function of the
/// size only, so the bits do not depend on the pool).
pub fn par_for(width: usize) -> Par {
    if width <= SEQ_MAX {
        Par::Seq
    } else {
        PAR
    }
}

/// Whether `op` on matrices `width` wide may start faer's parallel loops
/// (then it runs inside [`crate::exec::pool::install`]): Cholesky, LU, QR
/// and triangular solves above [`SEQ_MAX`]; the eigendecompositions, the
/// SVD and the Schur/Hessenberg reductions at every size.
pub fn runs_parallel(op: &LinalgOp, width: usize) -> bool {
    match op {
        LinalgOp::Cholesky
        | LinalgOp::TriangularSolve { .. }
        | LinalgOp::Lu
        | LinalgOp::Qr { .. } => width > SEQ_MAX,
        _ => true,
    }
}

/// An element type of the faer kernels: faer's field and the [`Buffer`]
/// variant holding it, with the LAPACK-convention kernels that replace
/// faer's where it departs from LAPACK (real fields: the f64 loops of
/// `super::portable`; complex fields: `super::lapack`).
pub trait Scalar: ComplexField + Copy {
    /// faer's Householder QR gives LAPACK's factors (real fields; faer's
    /// complex reflectors leave `R` a complex diagonal, LAPACK's a real one).
    const FAER_QR: bool;
    fn slice(b: &Buffer) -> Option<&[Self]>;
    fn buffer(v: Vec<Self>) -> Buffer;
    /// LAPACK `getrf` of one matrix: (packed L\U row-major, pivots, permutation).
    fn lu_lapack(a: MatRef<'_, Self>) -> (Vec<Self>, Vec<usize>, Vec<usize>);
    /// LAPACK `geqrf` + `orgqr` of one matrix: (q, r) row-major.
    fn qr_lapack(a: MatRef<'_, Self>, full_matrices: bool) -> Result<(Vec<Self>, Vec<Self>)>;
}

/// `Scalar` for `$t` stored as `Buffer::$variant`; `$lu` / `$qr` compute
/// the LAPACK-convention factors of one matrix.
macro_rules! scalar {
    ($t:ty, $variant:ident, faer_qr: $faer_qr:expr, lu: $lu:expr, qr: $qr:expr) => {
        impl Scalar for $t {
            const FAER_QR: bool = $faer_qr;
            fn slice(b: &Buffer) -> Option<&[$t]> {
                match b {
                    Buffer::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn buffer(v: Vec<$t>) -> Buffer {
                Buffer::$variant(v.into())
            }
            fn lu_lapack(a: MatRef<'_, $t>) -> (Vec<$t>, Vec<usize>, Vec<usize>) {
                $lu(a)
            }
            fn qr_lapack(a: MatRef<'_, $t>, full_matrices: bool) -> Result<(Vec<$t>, Vec<$t>)> {
                $qr(a, full_matrices)
            }
        }
    };
}
scalar!(f32, F32, faer_qr: true, lu: lu_widened, qr: qr_widened);
scalar!(f64, F64, faer_qr: true, lu: lu_widened, qr: qr_widened);
scalar!(c32, C64, faer_qr: false, lu: lu_complex, qr: qr_complex);
scalar!(c64, C128, faer_qr: false, lu: lu_complex, qr: qr_complex);

/// A real float that the portable (f64) LAPACK-convention factorizations
/// serve: widened to f64 and back.
trait Widen: Copy + Into<f64> {
    fn narrow(x: f64) -> Self;
}
impl Widen for f32 {
    fn narrow(x: f64) -> f32 {
        x as f32
    }
}
impl Widen for f64 {
    fn narrow(x: f64) -> f64 {
        x
    }
}

fn widened<T: Widen + Scalar>(a: MatRef<'_, T>) -> Vec<f64> {
    row_major(a).into_iter().map(Into::into).collect()
}

fn narrowed<T: Widen>(v: Vec<f64>) -> Vec<T> {
    v.into_iter().map(T::narrow).collect()
}

fn lu_widened<T: Widen + Scalar>(a: MatRef<'_, T>) -> (Vec<T>, Vec<usize>, Vec<usize>) {
    let (lu, p, q) = portable::lu_f64(a.nrows(), a.ncols(), &widened(a));
    (narrowed(lu), p, q)
}

fn qr_widened<T: Widen + Scalar>(
    a: MatRef<'_, T>, full_matrices: bool,
) -> Result<(Vec<T>, Vec<T>)> {
    let (q, r) = portable::qr_f64(a.nrows(), a.ncols(), &widened(a), full_matrices)?;
    Ok((narrowed(q), narrowed(r)))
}

fn lu_complex<T: lapack::Field>(a: MatRef<'_, T>) -> (Vec<T>, Vec<usize>, Vec<usize>) {
    let (f, p, q) = lapack::lu(&lapack::Mat::from_rows(a.nrows(), a.ncols(), row_major(a)));
    (f.d, p, q)
}

fn qr_complex<T: lapack::Field>(a: MatRef<'_, T>, full_matrices: bool) -> Result<(Vec<T>, Vec<T>)> {
    let m = lapack::Mat::from_rows(a.nrows(), a.ncols(), row_major(a));
    let (q, r) = lapack::qr(&m, full_matrices)?;
    Ok((q.d, r.d))
}

/// A matrix's entries in row-major order.
pub fn row_major<T: Copy>(a: MatRef<'_, T>) -> Vec<T> {
    let Some(&first) = a.col_iter().next().and_then(|c| c.iter().next()) else {
        return Vec::new();
    };
    let mut v = vec![first; a.nrows().saturating_mul(a.ncols())];
    copy_tiled(
        MatMut::from_row_major_slice_mut(&mut v, a.nrows(), a.ncols()),
        a,
        false,
    );
    v
}

/// A column-major copy of `a`.
fn owned<T: Scalar>(a: MatRef<'_, T>) -> Mat<T> {
    let mut m = Mat::<T>::zeros(a.nrows(), a.ncols());
    copy_tiled(m.as_mut(), a, false);
    m
}

/// A column-major working copy of a matrix for an in-place factorization.
/// Matrices at least [`PAD_FROM`] tall get [`PAD`] spare rows, so that the
/// column stride is no multiple of a large power of two: with a stride of
/// exactly 4 KiB (1024 f32 rows) the columns of a block share a few L1
/// sets, and the copies and faer's factorizations slow down (measured,
/// f32 1024: LU 15.2 -> 13.0 ms, QR 31.6 -> 28.3 ms, the copy back
/// 4.1 -> 1.5 ms).
struct Work<T> {
    m: Mat<T>,
    r: usize,
    c: usize,
}

const PAD: usize = 16;
const PAD_FROM: usize = 128;

impl<T> Work<T> {
    fn as_ref(&self) -> MatRef<'_, T> {
        self.m.as_ref().submatrix(0, 0, self.r, self.c)
    }

    fn as_mut(&mut self) -> MatMut<'_, T> {
        self.m.as_mut().submatrix_mut(0, 0, self.r, self.c)
    }
}

/// A padded column-major copy of `a` ([`Work`]).
fn work_copy<T: Scalar>(a: MatRef<'_, T>) -> Work<T> {
    let (r, c) = (a.nrows(), a.ncols());
    let pad = if r >= PAD_FROM { PAD } else { 0 };
    let mut m = Mat::<T>::zeros(r.saturating_add(pad), c);
    copy_tiled(m.as_mut(), a, false);
    Work { m, r, c }
}

/// The side of the square tiles of [`copy_tiled`]: a tile of each operand
/// stays in the L1 cache while it is transposed between layouts.
const TILE: usize = 32;

/// `dst = src` (with `lower_only`, only the lower triangle with the
/// diagonal), tile by tile, so that a copy between row- and column-major
/// layouts reads and writes whole cache lines.
fn copy_tiled<T: Copy>(mut dst: MatMut<'_, T>, src: MatRef<'_, T>, lower_only: bool) {
    let (m, n) = (src.nrows().min(dst.nrows()), src.ncols().min(dst.ncols()));
    for i in (0..m).step_by(TILE) {
        let h = TILE.min(m.saturating_sub(i));
        for j in (0..n).step_by(TILE) {
            if lower_only && j > i {
                break;
            }
            let w = TILE.min(n.saturating_sub(j));
            let s = src.submatrix(i, j, h, w);
            let mut d = dst.rb_mut().submatrix_mut(i, j, h, w);
            let diagonal = lower_only && i == j;
            for (r, (dr, sr)) in d.rb_mut().row_iter_mut().zip(s.row_iter()).enumerate() {
                let take = if diagonal { r.saturating_add(1) } else { w };
                for (x, y) in dr.iter_mut().zip(sr.iter()).take(take) {
                    *x = *y;
                }
            }
        }
    }
}

// ----------------------------------------------------------------- operands

/// A `[..., r, c]` operand: its flat data and matrix size (`r, c > 0`).
pub struct Stack<'a, T> {
    data: &'a [T],
    pub r: usize,
    c: usize,
    pub batch: usize,
}

impl<'a, T: Scalar> Stack<'a, T> {
    pub fn new(name: &'static str, a: &'a HostArray) -> Result<Stack<'a, T>> {
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
    pub fn views(&self) -> impl Iterator<Item = MatRef<'a, T>> + 'a {
        let (r, c) = (self.r, self.c);
        self.data
            .chunks_exact(r.saturating_mul(c).max(1))
            .map(move |m| MatRef::from_row_major_slice(m, r, c))
    }
}

/// A zero-filled output of `batch` row-major `r x c` matrices.
pub struct Out<T> {
    data: Vec<T>,
    r: usize,
    c: usize,
}

impl<T: Scalar> Out<T> {
    pub fn new(batch: usize, r: usize, c: usize) -> Result<Out<T>> {
        let len = checked_size(&[batch, r, c])?;
        Ok(Out {
            data: crate::array::alloc::filled("linalg", T::zero_impl(), len)?,
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

    pub fn buffer(self) -> Buffer {
        T::buffer(self.data)
    }

    /// Writes `vals` at flat offset `at`; returns the offset after them.
    pub fn put(&mut self, at: usize, vals: &[T]) -> usize {
        let end = at.saturating_add(vals.len());
        if let Some(dst) = self.data.get_mut(at..end) {
            dst.copy_from_slice(vals);
        }
        end
    }
}

/// A workspace of `req` (reused over the batch).
pub fn workspace(req: StackReq) -> Result<MemBuffer> {
    crate::array::live::admit("linalg workspace", req.size_bytes())?;
    MemBuffer::try_new(req).map_err(|_| Error::AllocationTooLarge {
        what: "linalg".into(),
        shape: format!("({},)", req.size_bytes()),
        dtype: "workspace",
        bytes: u128::try_from(req.size_bytes()).unwrap_or(u128::MAX),
        budget: crate::array::budget::max_buffer_bytes(),
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
/// portable kernels compute it: a real operand with an empty matrix
/// dimension, or a small real triangular solve (`SMALL_SOLVE`).
pub fn eval_buffers(op: &LinalgOp, args: &[&HostArray]) -> Result<Option<Vec<Buffer>>> {
    let name = op.name();
    let empty = args
        .iter()
        .any(|a| a.shape().iter().rev().take(2).any(|&d| d == 0));
    let complex = args.first().is_some_and(|a| a.dtype().is_complex());
    if empty && complex {
        return empty_complex(op, args).map(Some);
    }
    let small_solve = matches!(op, LinalgOp::TriangularSolve { .. })
        && args
            .first()
            .and_then(|a| a.shape().last())
            .is_some_and(|&m| m <= SMALL_SOLVE);
    if empty || (small_solve && !complex) {
        return Ok(None);
    }
    match args.first().map(|a| a.buffer()) {
        Some(Buffer::F32(_)) => eval_typed::<f32>(op, args).map(Some),
        Some(Buffer::F64(_)) => eval_typed::<f64>(op, args).map(Some),
        Some(Buffer::C64(_)) => eval_typed::<c32>(op, args).map(Some),
        Some(Buffer::C128(_)) => eval_typed::<c64>(op, args).map(Some),
        Some(other) => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32, float64, complex64 or complex128 operand",
        )),
        None => Err(Error::arity(name, 1, 0)),
    }
}

/// A complex operand with an empty matrix dimension: the outputs hold no
/// numbers but identities (a full `q`, `u`, `vt`) and iotas (the
/// permutation), which the portable kernels give for the real zeros of the
/// same shapes; their float outputs are widened to the complex dtype where
/// the output is complex.
fn empty_complex(op: &LinalgOp, args: &[&HostArray]) -> Result<Vec<Buffer>> {
    let dtype = args.first().map_or(DType::C64, |a| a.dtype());
    let real = dtype.real_dtype();
    let zeros: Vec<HostArray> = args
        .iter()
        .map(|a| HostArray::zeros(a.shape().to_vec(), real))
        .collect::<Result<_>>()?;
    let refs: Vec<&HostArray> = zeros.iter().collect();
    let outs = portable::eval_buffers(op, &refs, real)?;
    let avals = op.abstract_eval(
        &args
            .iter()
            .map(|a| crate::ir::Aval::new(a.shape().to_vec(), a.dtype()))
            .collect::<Vec<_>>(),
    )?;
    Ok(outs
        .into_iter()
        .zip(avals)
        .map(|(b, aval)| match (b, aval.dtype.is_complex()) {
            (Buffer::F32(v), true) => Buffer::C64(v.iter().map(|&x| c32::new(x, 0.0)).collect()),
            (Buffer::F64(v), true) => Buffer::C128(v.iter().map(|&x| c64::new(x, 0.0)).collect()),
            (b, _) => b,
        })
        .collect())
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
        LinalgOp::Cholesky => {
            let a = arg(0)?;
            Ok(vec![cholesky_all(&a, par_for(a.r))?.buffer()])
        }
        LinalgOp::TriangularSolve { conjugate_a, .. } => {
            let a = arg(0)?;
            let par = par_for(a.r);
            let o = op.solve_opts();
            Ok(vec![solve_all(&a, &arg(1)?, o, conjugate_a, par)?.buffer()])
        }
        LinalgOp::Lu => {
            let a = arg(0)?;
            lu_all(&a, par_for(a.r.max(a.c)))
        }
        LinalgOp::Qr { full_matrices } => {
            let a = arg(0)?;
            qr_all(&a, full_matrices, par_for(a.r.max(a.c)))
        }
        LinalgOp::Eigh { lower, .. } => eigh_all(&arg(0)?, lower),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => svd_all(&arg(0)?, full_matrices, compute_uv),
        LinalgOp::Eig { .. } | LinalgOp::Hessenberg | LinalgOp::Schur { .. } => Err(not_here(name)),
    }
}

/// `eig` and `hessenberg` have their own kernels (`super::eig`).
pub fn not_here(name: &'static str) -> Error {
    Error::InvalidArgument(format!("{name}: computed by the nonsymmetric kernels"))
}

// ----------------------------------------------------------------- cholesky

/// The lower Cholesky factor of each matrix (its lower triangle is read); a
/// matrix that is not positive definite gives NaNs, as JAX.
pub fn cholesky_all<T: Scalar>(a: &Stack<'_, T>, par: Par) -> Result<Out<T>> {
    let n = a.r;
    let req = cholesky::llt::factor::cholesky_in_place_scratch::<T>(n, par, Default::default());
    let mut mem = workspace(req)?;
    let mut out = Out::new(a.batch, n, n)?;
    for (src, mut dst) in a.views().zip(out.views()) {
        let mut l = work_copy(src);
        let done = cholesky::llt::factor::cholesky_in_place(
            l.as_mut(),
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        if done.is_ok() && l.as_ref().diagonal().column_vector().iter().all(is_finite) {
            copy_tiled(dst, l.as_ref(), true);
        } else {
            dst.fill(T::nan_impl());
        }
    }
    Ok(out)
}

// ----------------------------------------------------------------- solve

/// `op(a) x = b` (left side) or `x op(a) = b` for each pair of matrices;
/// only the `lower` (or upper) triangle of `a` is read.
pub fn solve_all<T: Scalar>(
    a: &Stack<'_, T>, b: &Stack<'_, T>, o: SolveOpts, conjugate_a: bool, par: Par,
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
        solve_in_place(t, conj, x.as_mut(), lower, o.unit_diagonal, par);
    }
    Ok(out)
}

fn solve_in_place<T: Scalar>(
    t: MatRef<'_, T>, conj: Conj, x: MatMut<'_, T>, lower: bool, unit: bool, par: Par,
) {
    use triangular_solve as ts;
    match (lower, unit) {
        (true, false) => ts::solve_lower_triangular_in_place_with_conj(t, conj, x, par),
        (true, true) => ts::solve_unit_lower_triangular_in_place_with_conj(t, conj, x, par),
        (false, false) => ts::solve_upper_triangular_in_place_with_conj(t, conj, x, par),
        (false, true) => ts::solve_unit_upper_triangular_in_place_with_conj(t, conj, x, par),
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
pub fn lu_all<T: Scalar>(a: &Stack<'_, T>, par: Par) -> Result<Vec<Buffer>> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let req = lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
        m,
        n,
        par,
        Default::default(),
    );
    let mut mem = workspace(req)?;
    let mut out = Out::new(a.batch, m, n)?;
    let mut piv = Vec::with_capacity(checked_size(&[a.batch, k])?);
    let mut perm_all = Vec::with_capacity(checked_size(&[a.batch, m])?);
    let (mut perm, mut perm_inv) = (vec![0usize; m], vec![0usize; m]);
    for (src, mut dst) in a.views().zip(out.views()) {
        let mut f = work_copy(src);
        lu::partial_pivoting::factor::lu_in_place(
            f.as_mut(),
            &mut perm,
            &mut perm_inv,
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        let zero_pivot = f
            .as_ref()
            .diagonal()
            .column_vector()
            .iter()
            .any(|d| *d == T::zero_impl());
        if zero_pivot || (!all_finite(f.as_ref()) && all_finite(src)) {
            // LAPACK leaves a zero pivot's column unscaled; faer divides.
            let (lu, p, q) = T::lu_lapack(src);
            dst.copy_from(MatRef::from_row_major_slice(&lu, m, n));
            piv.extend(p);
            perm_all.extend(q);
            continue;
        }
        copy_tiled(dst, f.as_ref(), false);
        pivots_of(&perm, &mut piv, k);
        perm_all.extend_from_slice(&perm);
    }
    let ints = |v: Vec<usize>| -> Result<Buffer> {
        let v: Result<Vec<i32>> = v.into_iter().map(index_i32).collect();
        Ok(Buffer::I32(v?.into()))
    };
    Ok(vec![out.buffer(), ints(piv)?, ints(perm_all)?])
}

// ----------------------------------------------------------------- qr

/// Householder QR of each matrix: `q` (`m x m` with `full_matrices`, else
/// `m x k`) and `r` (`m x n`, else `k x n`).
pub fn qr_all<T: Scalar>(a: &Stack<'_, T>, full_matrices: bool, par: Par) -> Result<Vec<Buffer>> {
    let (m, n) = (a.r, a.c);
    let k = m.min(n);
    let (qcols, rrows) = if full_matrices { (m, m) } else { (k, k) };
    let bs = qr::no_pivoting::factor::recommended_block_size::<T>(m, n);
    let req = StackReq::any_of(&[
        qr::no_pivoting::factor::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()),
        householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
            m, bs, qcols,
        ),
    ]);
    let mut mem = workspace(req)?;
    let mut q_out = Out::new(a.batch, m, qcols)?;
    let mut r_out = Out::new(a.batch, rrows, n)?;
    let mut coeff = Mat::<T>::zeros(bs, k);
    for ((src, mut q), mut r) in a.views().zip(q_out.views()).zip(r_out.views()) {
        let mut f = work_copy(src);
        let rank = if T::FAER_QR {
            qr::no_pivoting::factor::qr_in_place(
                f.as_mut(),
                coeff.as_mut(),
                par,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .rank
        } else {
            0
        };
        if rank < k || !all_finite(src) {
            let (qv, rv) = T::qr_lapack(src, full_matrices)?;
            q.copy_from(MatRef::from_row_major_slice(&qv, m, qcols));
            r.copy_from(MatRef::from_row_major_slice(&rv, rrows, n));
            continue;
        }
        copy_tiled(r.rb_mut(), f.as_ref().subrows(0, rrows), false);
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
            par,
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
            owned(src)
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
            copy_tiled(v.rb_mut(), u.as_ref(), false);
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
            copy_tiled(ud.rb_mut(), u.as_ref(), false);
            vtd.copy_from(v.adjoint());
        }
    }
    drop(uv_views);
    if !compute_uv {
        return Ok(vec![s_out.buffer()]);
    }
    Ok(vec![s_out.buffer(), u_out.buffer(), vt_out.buffer()])
}
