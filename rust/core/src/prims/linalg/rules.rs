//! Graph helpers and JVP rules of the linalg family, emitted with existing
//! primitives (`dot_general`, `triangular_solve`, masks from `iota`).

use super::{LinalgOp, SolveOpts};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Atom, Aval, Literal, Scalar};
use crate::prims::family::{emit, emit1, JvpOut};
use crate::prims::{BinaryOp, CmpOp, DotDims, Primitive, ReduceOp};
use crate::prims::{
    BroadcastInDim, ConvertElementType, DotGeneral, Iota, Pad, Reduce, Slice, Transpose,
};

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
        Primitive::DotGeneral(DotGeneral {
            dims,
            preferred_element_type: None,
        }),
        vec![x, y],
    )
}

/// Swaps the last two dimensions.
fn mt(b: &mut Builder, x: Atom) -> Result<Atom> {
    let (_, nb) = stack(b, &x)?;
    let mut permutation: Vec<usize> = (0..nb).collect();
    permutation.extend([nb.saturating_add(1), nb]);
    b.add_eqn1(Primitive::Transpose(Transpose { permutation }), vec![x])
}

fn is_complex(b: &Builder, x: &Atom) -> Result<bool> {
    Ok(b.aval(x)?.dtype.is_complex())
}

/// The complex conjugate of a complex `x`; a real `x` itself.
fn conj(b: &mut Builder, x: Atom) -> Result<Atom> {
    let dtype = b.aval(&x)?.dtype;
    if !dtype.is_complex() {
        return Ok(x);
    }
    emit1(
        b,
        crate::prims::complex::Conj { input_dtype: dtype },
        vec![x],
    )
}

/// The conjugate transpose over the last two dimensions (`mt` for real).
fn adj(b: &mut Builder, x: Atom) -> Result<Atom> {
    let xt = mt(b, x)?;
    conj(b, xt)
}

/// The real part of a complex `x`; a real `x` itself.
fn real(b: &mut Builder, x: Atom) -> Result<Atom> {
    if !is_complex(b, &x)? {
        return Ok(x);
    }
    emit1(b, crate::prims::complex::Real, vec![x])
}

/// `x` (a real array) in `like`'s dtype (complex operands' real parts
/// become complex).
fn as_dtype_of(b: &mut Builder, x: Atom, like: &Atom) -> Result<Atom> {
    let dtype = b.aval(like)?.dtype;
    if b.aval(&x)?.dtype == dtype {
        return Ok(x);
    }
    crate::prims::jvp::convert(b, x, dtype)
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
    b: &mut Builder, shape: &[usize], dtype: DType, cmp: CmpOp, k: i64, min_row: Option<usize>,
) -> Result<Atom> {
    let [.., m, n] = shape else {
        return Err(Error::shape("linalg", &[shape], "requires rank >= 2"));
    };
    let nd = shape.len();
    let iota = |b: &mut Builder, dimension: usize| {
        b.add_eqn1(
            Primitive::Iota(Iota {
                dtype: DType::I32,
                shape: vec![*m, *n],
                dimension,
            }),
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
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dtype,
            weak_type: false,
        }),
        vec![pred],
    )?;
    b.add_eqn1(
        Primitive::BroadcastInDim(BroadcastInDim {
            shape: shape.to_vec(),
            broadcast_dimensions: vec![nd.saturating_sub(2), nd.saturating_sub(1)],
        }),
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
        Primitive::Reduce(Reduce {
            op: ReduceOp::Sum,
            axes: vec![aval.ndim().saturating_sub(1)],
        }),
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
        Primitive::BroadcastInDim(BroadcastInDim {
            shape,
            broadcast_dimensions,
        }),
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
        Primitive::Slice(Slice {
            start_indices: vec![0; aval.ndim()],
            limit_indices: limit,
            strides: None,
        }),
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
    b.add_eqn1(Primitive::Pad(Pad { padding_config }), vec![x, zero])
}

fn solve(
    b: &mut Builder, a: Atom, rhs: Atom, left_side: bool, lower: bool, transpose_a: bool,
    unit_diagonal: bool,
) -> Result<Atom> {
    solve_conj(
        b,
        a,
        rhs,
        (left_side, lower, transpose_a, false),
        unit_diagonal,
    )
}

/// A triangular solve with `(left_side, lower, transpose_a, conjugate_a)`.
fn solve_conj(
    b: &mut Builder, a: Atom, rhs: Atom, (left_side, lower, transpose_a, conjugate_a): Flags,
    unit_diagonal: bool,
) -> Result<Atom> {
    emit1(
        b,
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            conjugate_a,
            unit_diagonal,
        },
        vec![a, rhs],
    )
}

type Flags = (bool, bool, bool, bool);

// ----------------------------------------------------------------- JVP

/// `L̇ = L Φ(L⁻¹ Ȧ L⁻ᴴ)`, Φ = lower triangle with the diagonal halved.
pub(super) fn jvp_cholesky(b: &mut Builder, x: Atom, t: Atom) -> JvpOut {
    let l = emit1(b, LinalgOp::Cholesky, vec![x])?;
    let tmp = solve_conj(b, l.clone(), t, (false, true, true, true), false)?;
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
pub(super) fn jvp_triangular_solve(
    op: LinalgOp, o: SolveOpts, b: &mut Builder, xs: &[Atom], ts: &[Option<Atom>],
) -> JvpOut {
    let conjugate_a = matches!(
        op,
        LinalgOp::TriangularSolve {
            conjugate_a: true,
            ..
        }
    );
    let SolveOpts {
        left_side,
        lower,
        transpose_a,
        unit_diagonal,
    } = o;
    let [a, _] = xs else {
        return Err(Error::arity("triangular_solve", 2, xs.len()));
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
        let g = b.unary(crate::prims::UnaryOp::Neg, g)?;
        let g = if transpose_a { mt(b, g)? } else { g };
        let g = if conjugate_a { conj(b, g)? } else { g };
        let prod = if left_side {
            mm(b, g, out.clone())?
        } else {
            mm(b, out.clone(), g)?
        };
        let ta_part = solve_with(b, prod)?;
        tout = crate::prims::jvp::add_opt(b, tout, Some(ta_part))?;
    }
    Ok((vec![out], vec![tout]))
}

/// The one-hot matrix `P[i, j] = (perm[i] == j)` of `sq` (`[..., m, m]`).
fn perm_matrix(b: &mut Builder, perm: Atom, sq: &[usize], dt: DType) -> Result<Atom> {
    let nb = sq.len().saturating_sub(2);
    let m = sq.last().copied().unwrap_or(0);
    let pi = spread(b, perm, m, m, false)?;
    let cols = b.add_eqn1(
        Primitive::Iota(Iota {
            dtype: DType::I32,
            shape: sq.to_vec(),
            dimension: nb.saturating_add(1),
        }),
        vec![],
    )?;
    let pb = b.add_eqn1(Primitive::Compare(CmpOp::Eq), vec![pi, cols])?;
    b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dt,
            weak_type: false,
        }),
        vec![pb],
    )
}

/// `a⁻¹ rhs` for square `a` through its partial-pivot LU.
fn lu_solve(b: &mut Builder, a: Atom, rhs: Atom) -> Result<Atom> {
    let (aval, _) = stack(b, &a)?;
    let outs = emit(b, LinalgOp::Lu, vec![a])?;
    let (f, perm) = (nth(&outs, 0)?, nth(&outs, 2)?);
    let pm = perm_matrix(b, perm, &aval.shape, aval.dtype)?;
    let prhs = mm(b, pm, rhs)?;
    let y = solve(b, f.clone(), prhs, true, true, false, true)?;
    solve(b, f, y, true, false, false, false)
}

/// The eigenvalue JVP of `eig` without eigenvectors:
/// `ẇ = diag(V⁻¹ Ȧ V)` with the right eigenvectors `V` (JAX's rule; the
/// eigenvector derivatives are not supported).
pub(super) fn jvp_eig(op: LinalgOp, b: &mut Builder, a: Atom, t: Atom) -> JvpOut {
    let LinalgOp::Eig {
        left,
        right,
        enable_eigvec_derivs,
    } = op
    else {
        return Err(Error::InvalidArgument("jvp_eig of another op".into()));
    };
    if left || right {
        return Err(Error::NotImplemented(if enable_eigvec_derivs {
            "eig: derivatives of non-symmetric eigenvectors (enable_eigvec_derivs=True) \
             are not supported by microjax_rs"
                .into()
        } else {
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on \
             the input that JAX cannot check (see the enable_eigvec_derivs argument to \
             jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to \
             opt in. See https://github.com/jax-ml/jax/issues/2748 for discussion."
                .into()
        }));
    }
    let with_v = LinalgOp::Eig {
        left: false,
        right: true,
        enable_eigvec_derivs,
    };
    let outs = emit(b, with_v, vec![a])?;
    let (w, v) = (nth(&outs, 0)?, nth(&outs, 1)?);
    let t = as_dtype_of(b, t, &v)?;
    let vinv_t = lu_solve(b, v.clone(), t)?;
    let p = mm(b, vinv_t, v)?;
    let dw = diag(b, p)?;
    Ok((vec![w], vec![Some(dw)]))
}

/// Through the triangular factors: with `x = P ȧ`,
/// `L̇ = L tril(L⁻¹ x U⁻¹, -1)`, `U̇ = triu(L⁻¹ x U⁻¹) U`.
pub(super) fn jvp_lu(b: &mut Builder, a: Atom, t: Atom) -> JvpOut {
    let outs = emit(b, LinalgOp::Lu, vec![a])?;
    let (f, perm) = (nth(&outs, 0)?, nth(&outs, 2)?);
    let (aval, nb) = stack(b, &f)?;
    let (m, n) = (
        aval.shape.get(nb).copied().unwrap_or(0),
        aval.shape.get(nb.saturating_add(1)).copied().unwrap_or(0),
    );
    let k = m.min(n);
    let dt = aval.dtype;
    let mut sq = aval.shape.get(..nb).unwrap_or_default().to_vec();
    sq.extend([m, m]);
    let pm = perm_matrix(b, perm, &sq, dt)?;
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

pub(super) fn jvp_qr(b: &mut Builder, x: Atom, dx: Atom, full_matrices: bool) -> JvpOut {
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
    let qt = adj(b, q.clone())?;
    let qt_dx = mm(b, qt, dx_rinv.clone())?;
    let low = tri(b, qt_dx.clone(), true, -1)?;
    let low_t = adj(b, low.clone())?;
    let skew = sub(b, low, low_t)?;
    let skew = if is_complex(b, &qt_dx)? {
        // the diagonal's imaginary part: dO is skew-Hermitian
        let re = real(b, qt_dx.clone())?;
        let re = as_dtype_of(b, re, &qt_dx)?;
        let im = sub(b, qt_dx.clone(), re)?;
        let im_diag = tri(b, im, true, 0)?;
        let im_diag = tri(b, im_diag, false, 0)?;
        add(b, skew, im_diag)?
    } else {
        skew
    };
    let dq_in = sub(b, skew.clone(), qt_dx.clone())?;
    let dq = mm(b, q, dq_in)?;
    let dq = add(b, dq, dx_rinv)?;
    let dr_in = sub(b, qt_dx, skew)?;
    let dr = mm(b, dr_in, r)?;
    Ok((outs, vec![Some(dq), Some(dr)]))
}

/// `ẇ = Re diag(Vᴴ Ȧ V)`, `V̇ = V (F ∘ Vᴴ Ȧ V)` with `F[i, j] = 1/(w[j] - w[i])`
/// off the diagonal and zero on it.
pub(super) fn jvp_eigh(op: LinalgOp, b: &mut Builder, a: Atom, t: Atom) -> JvpOut {
    let outs = emit(b, op, vec![a])?;
    let (v, w_real) = (nth(&outs, 0)?, nth(&outs, 1)?);
    let w = as_dtype_of(b, w_real, &v)?;
    let (aval, nb) = stack(b, &v)?;
    let n = aval.shape.get(nb).copied().unwrap_or(0);
    let e = eye(b, &aval.shape, aval.dtype)?;
    let wj = spread(b, w.clone(), n, n, true)?;
    let wi = spread(b, w, n, n, false)?;
    let diff = sub(b, wj, wi)?;
    let diff = add(b, diff, e.clone())?;
    let f = recip(b, diff)?;
    let f = sub(b, f, e)?;
    let vt = adj(b, v.clone())?;
    let vta = mm(b, vt, t)?;
    let vav = mm(b, vta, v.clone())?;
    let fv = mul(b, f, vav.clone())?;
    let dv = mm(b, v, fv)?;
    let dw = diag(b, vav)?;
    let dw = real(b, dw)?;
    Ok((outs, vec![Some(dv), Some(dw)]))
}

pub(super) fn jvp_svd(
    b: &mut Builder, a: Atom, da: Atom, full_matrices: bool, compute_uv: bool,
) -> JvpOut {
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
    let ut = adj(b, u.clone())?;
    let v = adj(b, vt.clone())?;
    let uta = mm(b, ut.clone(), da.clone())?;
    let ds_mat = mm(b, uta, v.clone())?;
    let ds = diag(b, ds_mat.clone())?;
    let ds = real(b, ds)?;
    if !compute_uv {
        return Ok((vec![s], vec![Some(ds)]));
    }
    let mut kk = aval.shape.get(..nb).unwrap_or_default().to_vec();
    kk.extend([k, k]);
    let e = eye(b, &kk, dt.real_dtype())?;
    let (f, sj, si) = svd_gap_factors(b, &s, k, &e)?;
    let s_inv_mat = safe_inverse_diag(b, &s, k, e, dt.real_dtype())?;
    let [f, sj, si, s_inv_mat] = [f, sj, si, s_inv_mat].map(|x| as_dtype_of(b, x, &ds_mat));
    let dss = mul(b, sj?, ds_mat.clone())?;
    let sds = mul(b, si?, ds_mat.clone())?;
    let ds_t = adj(b, ds_mat.clone())?;
    let skew = sub(b, ds_mat, ds_t)?;
    let skew = mul(b, skew, Builder::lit(dt, 0.5))?;
    let dudv_diag = mul(b, skew, s_inv_mat?)?;
    let f = f?;
    let dss_t = adj(b, dss.clone())?;
    let sym_u = add(b, dss, dss_t)?;
    let fu = mul(b, f.clone(), sym_u)?;
    let fu = add(b, fu, dudv_diag)?;
    let mut du = mm(b, u.clone(), fu)?;
    let sds_t = adj(b, sds.clone())?;
    let sym_v = add(b, sds, sds_t)?;
    let fv = mul(b, f, sym_v)?;
    let mut dv = mm(b, v.clone(), fv)?;
    if m > n {
        let rest = off_subspace_term(b, da, (&u, &ut), v, &s, (m, k))?;
        du = add(b, du, rest)?;
    } else if n > m {
        let dat = adj(b, da)?;
        let rest = off_subspace_term(b, dat, (&v, &vt), u.clone(), &s, (n, k))?;
        dv = add(b, dv, rest)?;
    }
    let dvt = adj(b, dv)?;
    Ok((vec![s, u, vt], vec![Some(ds), Some(du), Some(dvt)]))
}

/// For the singular values `s` (`k` of them), with `e` the `k × k`
/// identity: `F[i, j] = 1/(s[j]² - s[i]²)` off the diagonal and zero on
/// it, and `s` spread along rows (`s[j]`) and columns (`s[i]`).
fn svd_gap_factors(b: &mut Builder, s: &Atom, k: usize, e: &Atom) -> Result<(Atom, Atom, Atom)> {
    let sj = spread(b, s.clone(), k, k, true)?;
    let si = spread(b, s.clone(), k, k, false)?;
    let sum = add(b, sj.clone(), si.clone())?;
    let dif = sub(b, sj.clone(), si.clone())?;
    let s_diffs = mul(b, sum, dif)?;
    let f = add(b, s_diffs, e.clone())?;
    let f = recip(b, f)?;
    let f = sub(b, f, e.clone())?;
    Ok((f, sj, si))
}

/// `diag(1/s)` (`k × k`, `e` the identity), with zero where `s` is zero.
fn safe_inverse_diag(b: &mut Builder, s: &Atom, k: usize, e: Atom, dt: DType) -> Result<Atom> {
    let zero_mask = b.add_eqn1(
        Primitive::Compare(CmpOp::Eq),
        vec![s.clone(), Builder::lit(dt, 0.0)],
    )?;
    let s_zeros = b.add_eqn1(
        Primitive::ConvertElementType(ConvertElementType {
            new_dtype: dt,
            weak_type: false,
        }),
        vec![zero_mask],
    )?;
    let s_safe = add(b, s.clone(), s_zeros.clone())?;
    let s_inv = recip(b, s_safe)?;
    let s_inv = sub(b, s_inv, s_zeros)?;
    let s_inv_row = spread(b, s_inv, k, k, true)?;
    mul(b, s_inv_row, e)
}

/// The part of a thin SVD's `U̇` (or, transposed, `V̇`) outside the span of
/// `U`: `(I - U Uᴴ) Ȧ V / s`, for `da` = `Ȧ` (or `Ȧᴴ`), `(w, wt)` = `(U, Uᴴ)`
/// (or `(V, Vᴴ)`), `x` = `V` (or `U`), of `rows` rows and `k` columns.
fn off_subspace_term(
    b: &mut Builder, da: Atom, (w, wt): (&Atom, &Atom), x: Atom, s: &Atom,
    (rows, k): (usize, usize),
) -> Result<Atom> {
    let dax = mm(b, da, x)?;
    let proj = mm(b, wt.clone(), dax.clone())?;
    let proj = mm(b, w.clone(), proj)?;
    let rest = sub(b, dax, proj)?;
    let s_cols = spread(b, s.clone(), rows, k, true)?;
    let s_cols = as_dtype_of(b, s_cols, &rest)?;
    b.binary(BinaryOp::Div, rest, s_cols)
}
