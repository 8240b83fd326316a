//! The nonsymmetric kernels: `eig` on faer's eigendecomposition (real
//! operands through the real Schur form, so conjugate eigenvalue pairs are
//! exact conjugates, as LAPACK's `geev`) and `hessenberg` on the
//! LAPACK-convention reduction of [`super::lapack`].
//!
//! Eigenvectors are normalized as `geev`: unit 2-norm, and the component of
//! largest modulus (the first such) made real — positive for a complex
//! operand (`zgeev`), of the sign of its real part for the complex
//! eigenvectors of a real operand (`dgeev`'s rotation). The eigenvectors of
//! a real eigenvalue of a real operand are real with faer's sign. The
//! eigenvalue order is faer's (LAPACK's differs in general: compare
//! eigenvalues as sets). A matrix with a non-finite entry gives NaNs.
//!
//! Float arithmetic over the generic real type of the normalization.
#![allow(clippy::arithmetic_side_effects)]

use super::dense::{workspace, Out, Scalar, Stack, PAR};
use super::lapack::{self, Field};
use crate::array::{Buffer, HostArray};
use crate::error::{Error, Result};
use faer::diag::Diag;
use faer::dyn_stack::MemStack;
use faer::linalg::evd;
use faer::traits::{ComplexField, RealField};
use faer::{Mat, MatMut, MatRef};
use num_complex::Complex;
use num_traits::Float;

/// One matrix's eigenvalues and (row-major `n x n`) eigenvectors.
struct EigOne<R> {
    w: Vec<Complex<R>>,
    vl: Vec<Complex<R>>,
    vr: Vec<Complex<R>>,
}

/// Which eigenvectors to compute.
#[derive(Clone, Copy)]
pub(super) struct Want {
    pub(super) left: bool,
    pub(super) right: bool,
}

fn flag(b: bool) -> evd::ComputeEigenvectors {
    if b {
        evd::ComputeEigenvectors::Yes
    } else {
        evd::ComputeEigenvectors::No
    }
}

fn nan_one<R: Float>(n: usize) -> EigOne<R> {
    let nan = Complex::new(R::nan(), R::nan());
    let nn = n.saturating_mul(n);
    EigOne {
        w: vec![nan; n],
        vl: vec![nan; nn],
        vr: vec![nan; nn],
    }
}

/// Unit 2-norm, then the first largest component made real: positive, or
/// (`keep_sign`) of the sign of its real part.
fn normalize<R: Float>(v: &mut [Complex<R>], keep_sign: bool) {
    let norm = v.iter().fold(R::zero(), |s, x| s + x.norm_sqr()).sqrt();
    if norm > R::zero() {
        v.iter_mut().for_each(|x| *x = *x / norm);
    }
    let mut best = (0usize, R::zero());
    for (i, x) in v.iter().enumerate() {
        if x.norm_sqr() > best.1 {
            best = (i, x.norm_sqr());
        }
    }
    let Some(&vk) = v.get(best.0) else { return };
    let m = vk.norm();
    if m == R::zero() {
        return;
    }
    let mut phase = vk.conj() / m;
    if keep_sign && vk.re < R::zero() {
        phase = -phase;
    }
    v.iter_mut().for_each(|x| *x = *x * phase);
    if let Some(x) = v.get_mut(best.0) {
        x.im = R::zero();
    }
}

/// The columns of `u` (`n x n`) as row-major complex eigenvectors,
/// normalized; `im` the eigenvalues' imaginary parts of a real operand
/// (columns `j`, `j + 1` of a conjugate pair hold the real and imaginary
/// parts), `None` for a complex operand.
fn vectors<R: Float + Default>(u: &[Vec<Complex<R>>], im: Option<&[R]>) -> Vec<Complex<R>> {
    let n = u.len();
    let mut cols: Vec<Vec<Complex<R>>> = Vec::with_capacity(n);
    let mut j = 0;
    while j < n {
        let wim = im.and_then(|v| v.get(j)).copied().unwrap_or(R::zero());
        let col = u.get(j).cloned().unwrap_or_default();
        if im.is_none() || wim == R::zero() {
            let mut c = col;
            normalize(&mut c, im.is_some());
            cols.push(c);
            j = j.saturating_add(1);
            continue;
        }
        let next = u.get(j.saturating_add(1)).cloned().unwrap_or_default();
        let mut c: Vec<Complex<R>> = col
            .iter()
            .zip(&next)
            .map(|(a, b)| Complex::new(a.re, b.re))
            .collect();
        normalize(&mut c, true);
        let conj = c.iter().map(|x| x.conj()).collect();
        cols.push(c);
        cols.push(conj);
        j = j.saturating_add(2);
    }
    (0..n)
        .flat_map(|i| {
            cols.iter()
                .map(move |c| c.get(i).copied().unwrap_or_default())
        })
        .collect()
}

fn columns<T: Copy, U>(m: MatRef<'_, T>, f: impl Fn(T) -> U + Copy) -> Vec<Vec<U>> {
    m.col_iter()
        .map(|c| c.iter().map(|&x| f(x)).collect())
        .collect()
}

/// Runs `driver` (faer's real or complex eigendecomposition, given the left and right
/// eigenvector outputs `want` asks for and the workspace) on one `n x n`
/// matrix over `T`: the eigenvector matrices, `None` where it fails.
fn run_evd<T: ComplexField>(
    n: usize, want: Want,
    driver: impl FnOnce(
        Option<MatMut<'_, T>>,
        Option<MatMut<'_, T>>,
        &mut MemStack,
    ) -> std::result::Result<(), evd::EvdError>,
) -> Result<Option<(Mat<T>, Mat<T>)>> {
    let req = evd::evd_scratch::<T>(
        n,
        flag(want.left),
        flag(want.right),
        PAR,
        Default::default(),
    );
    let mut mem = workspace(req)?;
    let (mut ul, mut ur) = (Mat::<T>::zeros(n, n), Mat::<T>::zeros(n, n));
    let done = driver(
        want.left.then(|| ul.as_mut()),
        want.right.then(|| ur.as_mut()),
        MemStack::new(&mut mem),
    );
    Ok(done.is_ok().then_some((ul, ur)))
}

/// `eig` of one real matrix.
fn eig_real<R: RealField + Float + Scalar + Default>(
    a: MatRef<'_, R>, want: Want,
) -> Result<EigOne<R>> {
    let n = a.nrows();
    let (mut re, mut im) = (Diag::<R>::zeros(n), Diag::<R>::zeros(n));
    let vectors_lr = run_evd(n, want, |l, r, stack| {
        evd::evd_real(
            a,
            re.as_mut(),
            im.as_mut(),
            l,
            r,
            PAR,
            stack,
            Default::default(),
        )
    })?;
    let Some((ul, ur)) = vectors_lr else {
        return Ok(nan_one(n));
    };
    let wim: Vec<R> = im.column_vector().iter().copied().collect();
    let w = re
        .column_vector()
        .iter()
        .zip(&wim)
        .map(|(&r, &i)| Complex::new(r, i))
        .collect();
    let cplx = |x: R| Complex::new(x, R::zero());
    let mut out = EigOne {
        w,
        vl: vectors(&columns(ul.as_ref(), cplx), Some(&wim)),
        vr: vectors(&columns(ur.as_ref(), cplx), Some(&wim)),
    };
    positive_first(&mut out, n);
    Ok(out)
}

/// LAPACK's order of a conjugate pair: the eigenvalue with positive
/// imaginary part first (with its eigenvectors).
fn positive_first<R: Float>(e: &mut EigOne<R>, n: usize) {
    let mut j = 0usize;
    while j.saturating_add(1) < n {
        let (a, b) = (e.w.get(j).copied(), e.w.get(j.saturating_add(1)).copied());
        let (Some(a), Some(b)) = (a, b) else { break };
        if a.im == R::zero() {
            j = j.saturating_add(1);
            continue;
        }
        if a.im < R::zero() && b == a.conj() {
            e.w.swap(j, j.saturating_add(1));
            for v in [&mut e.vl, &mut e.vr] {
                for row in v.chunks_exact_mut(n.max(1)) {
                    row.swap(j, j.saturating_add(1));
                }
            }
        }
        j = j.saturating_add(2);
    }
}

/// `eig` of one complex matrix.
fn eig_cplx<R: RealField + Float + Default>(
    a: MatRef<'_, Complex<R>>, want: Want,
) -> Result<EigOne<R>>
where
    Complex<R>: Scalar,
{
    let n = a.nrows();
    let mut s = Diag::<Complex<R>>::zeros(n);
    let vectors_lr = run_evd(n, want, |l, r, stack| {
        evd::evd_cplx(a, s.as_mut(), l, r, PAR, stack, Default::default())
    })?;
    let Some((ul, ur)) = vectors_lr else {
        return Ok(nan_one(n));
    };
    Ok(EigOne {
        w: s.column_vector().iter().copied().collect(),
        vl: vectors(&columns(ul.as_ref(), |x| x), None),
        vr: vectors(&columns(ur.as_ref(), |x| x), None),
    })
}

/// `eig` over the batch: `[w, vl?, vr?]`, complex.
fn eig_all<T: Scalar, R: Float>(
    a: &Stack<'_, T>, want: Want, one: impl Fn(MatRef<'_, T>) -> Result<EigOne<R>>,
) -> Result<Vec<Buffer>>
where
    Complex<R>: Scalar,
{
    let n = a.r;
    let mut w = Out::<Complex<R>>::new(a.batch, 1, n)?;
    let mut vl = Out::<Complex<R>>::new(if want.left { a.batch } else { 0 }, n, n)?;
    let mut vr = Out::<Complex<R>>::new(if want.right { a.batch } else { 0 }, n, n)?;
    let (mut at_w, mut at_l, mut at_r) = (0usize, 0usize, 0usize);
    for m in a.views() {
        let e = one(m)?;
        at_w = w.put(at_w, &e.w);
        if want.left {
            at_l = vl.put(at_l, &e.vl);
        }
        if want.right {
            at_r = vr.put(at_r, &e.vr);
        }
    }
    let mut outs = vec![w.buffer()];
    if want.left {
        outs.push(vl.buffer());
    }
    if want.right {
        outs.push(vr.buffer());
    }
    Ok(outs)
}

/// `eig` of a float32/float64/complex64/complex128 operand.
pub(super) fn eig_buffers(name: &'static str, a: &HostArray, want: Want) -> Result<Vec<Buffer>> {
    match a.buffer() {
        Buffer::F32(_) => eig_all(&Stack::<f32>::new(name, a)?, want, |m| eig_real(m, want)),
        Buffer::F64(_) => eig_all(&Stack::<f64>::new(name, a)?, want, |m| eig_real(m, want)),
        Buffer::C64(_) => eig_all(&Stack::<Complex<f32>>::new(name, a)?, want, |m| {
            eig_cplx(m, want)
        }),
        Buffer::C128(_) => eig_all(&Stack::<Complex<f64>>::new(name, a)?, want, |m| {
            eig_cplx(m, want)
        }),
        other => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32, float64, complex64 or complex128 operand",
        )),
    }
}

// ----------------------------------------------------------------- hessenberg

fn hessenberg_all<T: Scalar + Field>(a: &Stack<'_, T>) -> Result<Vec<Buffer>> {
    let n = a.r;
    let mut h = Out::<T>::new(a.batch, n, n)?;
    let mut taus = Out::<T>::new(a.batch, 1, n.saturating_sub(1))?;
    let (mut at_h, mut at_t) = (0usize, 0usize);
    for m in a.views() {
        let src = lapack::Mat::from_rows(n, n, super::dense::row_major(m));
        let (f, t) = lapack::hessenberg(&src);
        at_h = h.put(at_h, &f.d);
        at_t = taus.put(at_t, &t);
    }
    Ok(vec![h.buffer(), taus.buffer()])
}

/// `hessenberg` of a float32/float64/complex64/complex128 operand:
/// `[packed, taus]`.
pub(super) fn hessenberg_buffers(name: &'static str, a: &HostArray) -> Result<Vec<Buffer>> {
    match a.buffer() {
        Buffer::F32(_) => hessenberg_all(&Stack::<f32>::new(name, a)?),
        Buffer::F64(_) => hessenberg_all(&Stack::<f64>::new(name, a)?),
        Buffer::C64(_) => hessenberg_all(&Stack::<Complex<f32>>::new(name, a)?),
        Buffer::C128(_) => hessenberg_all(&Stack::<Complex<f64>>::new(name, a)?),
        other => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32, float64, complex64 or complex128 operand",
        )),
    }
}

// ----------------------------------------------------------------- schur

/// `schur` over the batch with `one` the kernel of one matrix: `[t, vs?]`.
fn schur_all<T: Scalar + Field>(
    a: &Stack<'_, T>, vectors: bool,
    one: impl Fn(&lapack::Mat<T>) -> Result<(lapack::Mat<T>, lapack::Mat<T>)>,
) -> Result<Vec<Buffer>> {
    let n = a.r;
    let mut t = Out::<T>::new(a.batch, n, n)?;
    let mut z = Out::<T>::new(if vectors { a.batch } else { 0 }, n, n)?;
    let (mut at_t, mut at_z) = (0usize, 0usize);
    for m in a.views() {
        let src = lapack::Mat::from_rows(n, n, super::dense::row_major(m));
        let (tm, zm) = one(&src)?;
        at_t = t.put(at_t, &tm.d);
        if vectors {
            at_z = z.put(at_z, &zm.d);
        }
    }
    let mut outs = vec![t.buffer()];
    if vectors {
        outs.push(z.buffer());
    }
    Ok(outs)
}

/// `schur` of a float32/float64 operand (the real Schur form, 2x2 blocks for
/// conjugate pairs) or a complex64/complex128 operand (upper triangular):
/// `[t, vs?]`.
pub(super) fn schur_buffers(
    name: &'static str, a: &HostArray, vectors: bool,
) -> Result<Vec<Buffer>> {
    use super::real_schur::real_schur;
    use super::schur::schur;
    match a.buffer() {
        Buffer::F32(_) => schur_all(&Stack::<f32>::new(name, a)?, vectors, real_schur),
        Buffer::F64(_) => schur_all(&Stack::<f64>::new(name, a)?, vectors, real_schur),
        Buffer::C64(_) => schur_all(&Stack::<Complex<f32>>::new(name, a)?, vectors, schur),
        Buffer::C128(_) => schur_all(&Stack::<Complex<f64>>::new(name, a)?, vectors, schur),
        other => Err(Error::dtype(
            name,
            &[other.dtype()],
            "requires a float32, float64, complex64 or complex128 operand",
        )),
    }
}
