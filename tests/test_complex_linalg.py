"""Linear algebra on complex matrices and the nonsymmetric eigenproblem.

Values against NumPy/SciPy (invariants where the factorization is not
unique: reconstruction, unitarity, eigen-equations), JVPs against central
differences along complex directions (real and imaginary parts perturbed
together), gradients of real-valued losses against the JVP
(``d/dε L(A + εT) = Re Σ grad ∘ T``, JAX's convention for complex inputs),
vmap against a loop, jit against eager, and the errors JAX raises.
"""
import numpy as np
import pytest
import scipy.linalg as sla

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

pytestmark = pytest.mark.usefixtures("x64")

C128_TOL = dict(rtol=1e-9, atol=1e-9)


def _cmat(seed, shape, shift=0.0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    if shift:
        a = a + shift * np.eye(shape[-2], shape[-1])
    return a.astype(np.complex128)


def _hpd(seed, n, batch=()):
    x = _cmat(seed, batch + (n, n))
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)


def _adj(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _fd_jvp(f, a, t, eps=1e-6):
    hi = np.asarray(f(jnp.asarray(a + eps * t)))
    lo = np.asarray(f(jnp.asarray(a - eps * t)))
    return (hi - lo) / (2 * eps)


def _check_ad(f, a, seed=0, real_loss=None):
    """JVP against central differences; VJP of a real loss against the JVP."""
    t = _cmat(seed + 100, a.shape)
    _, jt = jax.jvp(f, (jnp.asarray(a),), (jnp.asarray(t),))
    np.testing.assert_allclose(np.asarray(jt), _fd_jvp(f, a, t), rtol=1e-5, atol=1e-6)
    w = _cmat(seed + 200, np.shape(np.asarray(jt)))
    loss = real_loss or (lambda x: jnp.sum(jnp.real(f(x) * w)))
    g = np.asarray(jax.grad(loss)(jnp.asarray(a)))
    directional = float(np.sum(np.real(np.asarray(jt) * w)))
    np.testing.assert_allclose(float(np.sum(np.real(g * t))), directional, rtol=1e-7, atol=1e-9)


# ----------------------------------------------------------------- values


def test_cholesky_complex_matches_numpy():
    a = _hpd(1, 4, (2,))
    got = np.asarray(lax.linalg.cholesky(a))
    np.testing.assert_allclose(got, np.linalg.cholesky(a), **C128_TOL)
    got32 = np.asarray(jnp.linalg.cholesky(a.astype(np.complex64)))
    assert got32.dtype == np.complex64
    np.testing.assert_allclose(got32, np.linalg.cholesky(a), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("n", [3, 40])
@pytest.mark.parametrize("conj", [False, True])
def test_triangular_solve_complex(n, conj):
    a = _cmat(2, (n, n), shift=3.0)
    b = _cmat(3, (n, 2))
    got = np.asarray(lax.linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True,
                                                 conjugate_a=conj))
    t = np.tril(a).T
    t = np.conj(t) if conj else t
    np.testing.assert_allclose(got, np.linalg.solve(t, b), **C128_TOL)


def test_lu_complex_matches_lapack():
    a = _cmat(4, (5, 5))
    lu, piv, perm = lax.linalg.lu(a)
    ref_lu, ref_piv = sla.lu_factor(a)
    np.testing.assert_allclose(np.asarray(lu), ref_lu, **C128_TOL)
    np.testing.assert_array_equal(np.asarray(piv), ref_piv)
    p = np.asarray(perm)
    l_ = np.tril(np.asarray(lu), -1) + np.eye(5)
    np.testing.assert_allclose(a[p], l_ @ np.triu(np.asarray(lu)), **C128_TOL)


def test_lu_complex_zero_pivot_leaves_column():
    a = np.array([[0, 1 + 1j, 2], [0, 3, 4j], [0, 5, 7]], np.complex128)
    lu, piv, _ = lax.linalg.lu(a)
    ref_lu, ref_piv = sla.lu_factor(a)
    np.testing.assert_allclose(np.asarray(lu), ref_lu, **C128_TOL)
    np.testing.assert_array_equal(np.asarray(piv), ref_piv)


@pytest.mark.parametrize("shape,mode", [((5, 3), "reduced"), ((3, 3), "complete"), ((4, 2), "complete"),
                                        ((2, 4), "reduced")])
def test_qr_complex_matches_lapack(shape, mode):
    """LAPACK's reflectors make R's diagonal real: the factors are NumPy's."""
    a = _cmat(5, shape)
    q, r = jnp.linalg.qr(a, mode=mode)
    rq, rr = np.linalg.qr(a, mode=mode)
    np.testing.assert_allclose(np.asarray(q), rq, **C128_TOL)
    np.testing.assert_allclose(np.asarray(r), rr, **C128_TOL)


def test_eigh_complex_invariants():
    a = _hpd(6, 4, (2,))
    v, w = lax.linalg.eigh(a)
    assert np.asarray(w).dtype == np.float64 and np.asarray(v).dtype == np.complex128
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(a), **C128_TOL)
    v = np.asarray(v)
    np.testing.assert_allclose(a @ v, v * np.asarray(w)[..., None, :], **C128_TOL)
    np.testing.assert_allclose(_adj(v) @ v, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (3, 3)])
def test_svd_complex_invariants(shape):
    a = _cmat(7, shape)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    assert np.asarray(s).dtype == np.float64
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a, compute_uv=False), **C128_TOL)
    np.testing.assert_allclose(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, **C128_TOL)


def test_numpy_linalg_complex_functions():
    a = _cmat(8, (3, 4, 4), shift=2.0)
    b = _cmat(9, (3, 4, 2))
    np.testing.assert_allclose(np.asarray(jnp.linalg.solve(a, b)), np.linalg.solve(a, b), **C128_TOL)
    np.testing.assert_allclose(np.asarray(jnp.linalg.inv(a)), np.linalg.inv(a), **C128_TOL)
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(a)), np.linalg.det(a), **C128_TOL)
    sign, logdet = jnp.linalg.slogdet(a)
    rs, rl = np.linalg.slogdet(a)
    np.testing.assert_allclose(np.asarray(sign), rs, **C128_TOL)
    np.testing.assert_allclose(np.asarray(logdet), rl, **C128_TOL)
    assert np.asarray(logdet).dtype == np.float64
    r = _cmat(10, (5, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(r)), np.linalg.pinv(r), **C128_TOL)
    for ord_ in (None, "fro", 2, -2, "nuc", 1, np.inf):
        np.testing.assert_allclose(np.asarray(jnp.linalg.norm(r, ord=ord_)), np.linalg.norm(r, ord=ord_),
                                   **C128_TOL)
    low = r @ _cmat(11, (3, 5))[:3, :]
    assert int(jnp.linalg.matrix_rank(low)) == np.linalg.matrix_rank(low)
    x, resid, rank, sv = jnp.linalg.lstsq(r, _cmat(12, (5,)))
    rx = np.linalg.lstsq(r, _cmat(12, (5,)), rcond=None)
    np.testing.assert_allclose(np.asarray(x), rx[0], **C128_TOL)
    np.testing.assert_allclose(np.asarray(resid), rx[1], **C128_TOL)


def test_empty_complex_matrices():
    q, r = lax.linalg.qr(np.zeros((3, 0), np.complex64), full_matrices=True)
    np.testing.assert_array_equal(np.asarray(q), np.eye(3))
    assert np.asarray(q).dtype == np.complex64 and np.asarray(r).shape == (3, 0)
    s = lax.linalg.svd(np.zeros((0, 2), np.complex64), compute_uv=False)
    assert np.asarray(s).shape == (0,) and np.asarray(s).dtype == np.float32
    _, _, perm = lax.linalg.lu(np.zeros((3, 0), np.complex128))
    np.testing.assert_array_equal(np.asarray(perm), [0, 1, 2])


def test_complex_linalg_jit_and_vmap():
    a = _hpd(13, 3, (4,))
    for f in (lambda x: lax.linalg.cholesky(x), lambda x: jnp.linalg.inv(x),
              lambda x: jnp.linalg.eigvalsh(x), lambda x: jnp.linalg.svd(x, compute_uv=False),
              lambda x: jnp.linalg.qr(x)[1], lambda x: jnp.linalg.det(x)):
        eager = np.asarray(f(a))
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(a)), eager)
        looped = np.stack([np.asarray(f(m)) for m in a])
        np.testing.assert_allclose(np.asarray(jax.vmap(f)(a)), looped, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------- AD on complex inputs


def test_cholesky_complex_ad():
    a = _hpd(14, 3)
    _check_ad(lambda x: lax.linalg.cholesky(x), a)


def test_triangular_solve_complex_ad():
    b = _cmat(15, (3, 2))
    for conj in (False, True):
        f = (lambda c: lambda x: lax.linalg.triangular_solve(x, b, left_side=True, lower=False,
                                                             transpose_a=True, conjugate_a=c))(conj)
        _check_ad(f, _cmat(16, (3, 3), shift=3.0))


def test_lu_solve_inv_det_complex_ad():
    a = _cmat(17, (3, 3), shift=2.0)
    bb = _cmat(18, (3, 2))
    for f in (lambda x: lax.linalg.lu(x)[0], lambda x: jnp.linalg.solve(x, bb), jnp.linalg.inv,
              jnp.linalg.det, lambda x: jnp.linalg.slogdet(x)[1]):
        _check_ad(f, a)


def test_qr_complex_ad():
    _check_ad(lambda x: jnp.linalg.qr(x)[0], _cmat(19, (4, 3)))
    _check_ad(lambda x: jnp.linalg.qr(x)[1], _cmat(19, (4, 3)))


def test_eigh_complex_ad():
    a = _hpd(20, 3)
    _check_ad(lambda x: jnp.linalg.eigvalsh(x), a)
    # a phase-invariant function of the eigenvectors: the projectors v vᴴ
    def proj(x):
        v = lax.linalg.eigh(x)[0]
        return v[:, :1] @ jnp.conj(v[:, :1]).T
    _check_ad(proj, a)


def test_svd_complex_ad():
    for shape in ((4, 3), (3, 4), (3, 3)):
        a = _cmat(21, shape)
        _check_ad(lambda x: jnp.linalg.svd(x, compute_uv=False), a)
        def proj(x):
            u, _, vh = jnp.linalg.svd(x, full_matrices=False)
            return u[:, :1] @ vh[:1, :]
        _check_ad(proj, a)
    _check_ad(lambda x: jnp.linalg.pinv(x), _cmat(22, (4, 3)))
    _check_ad(lambda x: jnp.linalg.norm(x, ord=2), _cmat(22, (4, 3)))


# ----------------------------------------------------------------- nonsymmetric eig


def _sorted(w):
    w = np.asarray(w)
    return w[np.lexsort((np.round(w.imag, 8), np.round(w.real, 8)))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_invariants(dtype):
    rng = np.random.default_rng(23)
    a = rng.uniform(-1, 1, (2, 5, 5))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, (2, 5, 5))
    a = a.astype(dtype)
    w, vl, vr = lax.linalg.eig(a)
    w, vl, vr = (np.asarray(x) for x in (w, vl, vr))
    cdt = np.complex64 if dtype in (np.float32, np.complex64) else np.complex128
    assert w.dtype == vl.dtype == vr.dtype == cdt
    tol = dict(rtol=2e-4, atol=2e-4) if cdt == np.complex64 else C128_TOL
    a64 = a.astype(np.complex128)
    for i in range(2):
        np.testing.assert_allclose(_sorted(w[i]), _sorted(np.linalg.eigvals(a64[i])), **tol)
    np.testing.assert_allclose(a64 @ vr, vr * w[..., None, :], **tol)
    np.testing.assert_allclose(_adj(vl) @ a64, np.conj(w)[..., :, None] * _adj(vl) if False else
                               w[..., :, None] * _adj(vl), **tol)
    # geev normalization: unit 2-norm, the largest component real
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, **tol)
        k = np.argmax(np.abs(v), axis=-2)
        big = np.take_along_axis(v, k[..., None, :], axis=-2)
        np.testing.assert_allclose(big.imag, 0.0, atol=1e-6)


def test_eig_real_input_gives_exact_conjugate_pairs():
    """Recorded from JAX 0.10.2 (LAPACK dgeev): eigenvalues of this matrix and
    the eigenvector of the real eigenvalue."""
    a = np.array([[1., 2, 0], [-3, 1, 1], [0.5, 0, 2]])
    w, vr = jnp.linalg.eig(a)
    w, vr = np.asarray(w), np.asarray(vr)
    want = np.array([0.93144144 + 2.4801649j, 0.93144144 - 2.4801649j, 2.13711712 + 0.j])
    np.testing.assert_allclose(_sorted(w), _sorted(want), rtol=1e-7)
    pair = np.flatnonzero(w.imag != 0)
    assert w[pair[0]] == np.conj(w[pair[1]])
    real_col = vr[:, np.flatnonzero(w.imag == 0)[0]]
    want_v = np.array([0.26152976, 0.14869498, 0.95367289])
    np.testing.assert_allclose(np.abs(real_col.real), want_v, rtol=1e-7)
    np.testing.assert_allclose(real_col.imag, 0.0, atol=0)
    # the complex pair's eigenvector: largest component real, of its real part's sign
    # (recorded: -0.77334751 in row 1 for the eigenvalue with positive imaginary part)
    col = vr[:, pair[np.argmax(w[pair].imag)]]
    np.testing.assert_allclose(col[1], -0.77334751, rtol=1e-7)


def test_eig_options_and_transforms():
    a = np.random.default_rng(24).uniform(-1, 1, (3, 4, 4))
    outs = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(outs) == 1
    w = np.asarray(jnp.linalg.eigvals(a))
    np.testing.assert_array_equal(np.asarray(jax.jit(jnp.linalg.eigvals)(a)), w)
    looped = np.stack([np.asarray(jnp.linalg.eigvals(m)) for m in a])
    np.testing.assert_allclose(np.asarray(jax.vmap(jnp.linalg.eigvals)(a)), looped, rtol=1e-12, atol=1e-12)
    w2, v = jnp.linalg.eig(a)
    np.testing.assert_allclose(np.asarray(jax.vmap(lambda m: jnp.linalg.eig(m)[1])(a)), np.asarray(v),
                               rtol=1e-12, atol=1e-12)


def test_eigvals_ad_real_and_complex():
    a = np.random.default_rng(25).uniform(-1, 1, (4, 4)) + 2 * np.diag([1.0, 2.0, 3.0, 4.0])
    t = np.random.default_rng(26).uniform(-1, 1, (4, 4))
    f = jnp.linalg.eigvals
    _, jt = jax.jvp(f, (jnp.asarray(a),), (jnp.asarray(t),))
    np.testing.assert_allclose(_sorted(jt), _sorted(_fd_jvp(f, a, t)), rtol=1e-5, atol=1e-6)
    g = np.asarray(jax.grad(lambda x: jnp.sum(jnp.real(jnp.linalg.eigvals(x))))(a))
    np.testing.assert_allclose(g, np.eye(4), atol=1e-9)  # d trace / dA
    _check_ad(lambda x: jnp.sum(jnp.linalg.eigvals(x) ** 2), _cmat(27, (3, 3), shift=1.0))


def test_eig_eigenvector_derivative_raises():
    a = np.eye(3) + 0.1
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jax.grad(lambda x: jnp.real(jnp.linalg.eig(x)[1]).sum())(a)


def test_eig_errors():
    with pytest.raises(ValueError, match="must be a square matrix"):
        lax.linalg.eig(np.ones((2, 3)))
    with pytest.raises(TypeError, match="eig does not accept dtype int32"):
        lax.linalg.eig(np.ones((3, 3), np.int32))
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.eigvals(np.ones((2, 3)))


def test_eig_nan_input_gives_nans():
    a = np.array([[1.0, np.nan], [0.0, 2.0]])
    w = np.asarray(jnp.linalg.eigvals(a))
    assert np.isnan(w).all()


# ----------------------------------------------------------------- hessenberg, roots


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_hessenberg_matches_lapack_gehrd(dtype):
    rng = np.random.default_rng(28)
    a = rng.uniform(-1, 1, (5, 5))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, (5, 5))
    a = a.astype(dtype)
    packed, taus = lax.linalg.hessenberg(a)
    gehrd = sla.lapack.zgehrd if np.issubdtype(dtype, np.complexfloating) else sla.lapack.dgehrd
    ref, ref_tau, _ = gehrd(a.astype(np.complex128 if np.issubdtype(dtype, np.complexfloating) else np.float64))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype in (np.float32, np.complex64) else C128_TOL
    np.testing.assert_allclose(np.asarray(packed), ref, **tol)
    np.testing.assert_allclose(np.asarray(taus), ref_tau[:4], **tol)
    h, q = jax.scipy.linalg.hessenberg(a, calc_q=True)
    rh, rq = sla.hessenberg(a.astype(ref.dtype), calc_q=True)
    np.testing.assert_allclose(np.asarray(h), rh, **tol)
    np.testing.assert_allclose(np.asarray(q), rq, **tol)


def test_hessenberg_recorded_from_jax():
    """Recorded from JAX 0.10.2: lax.linalg.hessenberg of this matrix."""
    a = np.array([[1., 2, 0], [-3, 1, 1], [0.5, 0, 2]])
    packed, taus = lax.linalg.hessenberg(a)
    want = np.array([[1., -1.97278785, 0.32879797], [3.04138127, 0.86486486, -0.81081081],
                     [-0.08276253, 0.18918919, 2.13513514]])
    np.testing.assert_allclose(np.asarray(packed), want, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(taus), [1.98639392, 0.0], rtol=1e-7, atol=1e-12)
    v = jax.vmap(lambda m: lax.linalg.hessenberg(m)[0])(np.stack([a, 2 * a]))
    np.testing.assert_allclose(np.asarray(v)[1], np.asarray(lax.linalg.hessenberg(2 * a)[0]), rtol=1e-12)


def test_roots():
    p = np.array([0.0, 0.0, 1.0, -6.0, 11.0, -6.0])
    r = np.asarray(jnp.roots(p))
    assert r.dtype == np.complex128
    np.testing.assert_allclose(_sorted(r), _sorted(np.roots(p)), rtol=1e-9)
    r2 = np.asarray(jax.jit(lambda q: jnp.roots(q, strip_zeros=False))(p))
    assert r2.shape == (5,) and np.isnan(r2[-2:]).all()
    np.testing.assert_allclose(_sorted(r2[:3]), [1, 2, 3], rtol=1e-9)
    pc = np.array([1.0, 1j, 2.0 - 1j])
    np.testing.assert_allclose(_sorted(jnp.roots(pc)), _sorted(np.roots(pc)), rtol=1e-9)
    assert np.asarray(jnp.roots(np.array([3.0]))).shape == (0,)
    with pytest.raises(ValueError, match="rank-1"):
        jnp.roots(np.ones((2, 2)))


def test_complex_linalg_portable_mode_is_a_clear_error():
    old = jax.config.read("microjax_determinism")
    jax.config.update("microjax_determinism", "portable")
    try:
        with pytest.raises(NotImplementedError, match="Portable"):
            np.asarray(lax.linalg.cholesky(_hpd(29, 3)))
        with pytest.raises(NotImplementedError, match="Portable"):
            np.asarray(jnp.linalg.eigvals(np.eye(3)))
        # real operands keep the portable kernels; hessenberg is portable itself
        np.testing.assert_allclose(np.asarray(lax.linalg.cholesky(np.eye(3) * 4.0)), 2 * np.eye(3))
        np.asarray(lax.linalg.hessenberg(_cmat(30, (3, 3)))[0])
    finally:
        jax.config.update("microjax_determinism", old)


# ----------------------------------------------------------------- schur and its functions


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_lax_schur_invariants(dtype):
    a = _cmat(31, (2, 6, 6)).astype(dtype)
    t, z = lax.linalg.schur(a)
    t, z = np.asarray(t), np.asarray(z)
    tol = dict(rtol=3e-4, atol=3e-4) if dtype == np.complex64 else C128_TOL
    np.testing.assert_allclose(z @ t @ _adj(z), a, **tol)
    np.testing.assert_allclose(np.tril(t, -1), 0, atol=tol["atol"])
    np.testing.assert_allclose(_adj(z) @ z, np.broadcast_to(np.eye(6), (2, 6, 6)), atol=tol["atol"])
    np.testing.assert_allclose(_sorted(np.diagonal(t[0])), _sorted(np.linalg.eigvals(a[0].astype(complex))),
                               **tol)
    (t_only,) = lax.linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_array_equal(np.asarray(t_only), t)


def test_schur_real_and_complex_output_and_options():
    a = np.random.default_rng(32).uniform(-1, 1, (3, 3))
    # a real matrix gets its real Schur form (tests/test_real_schur.py)
    for tr, zr in (lax.linalg.schur(a), jax.scipy.linalg.schur(a)):
        assert np.asarray(tr).dtype == np.asarray(zr).dtype == a.dtype
        np.testing.assert_allclose(np.asarray(zr) @ np.asarray(tr) @ np.asarray(zr).T, a, **C128_TOL)
    with pytest.raises(NotImplementedError, match="sort"):
        lax.linalg.schur(a.astype(complex), sort_eig_vals=True)
    with pytest.raises(ValueError, match="Expected 'output'"):
        jax.scipy.linalg.schur(a, output="x")
    with pytest.raises(ValueError, match="must be a square matrix"):
        lax.linalg.schur(np.ones((2, 3), complex))
    t, z = jax.scipy.linalg.schur(a, output="complex")
    np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ _adj(np.asarray(z)), a, **C128_TOL)


def test_sqrtm_funm_rsf2csf_against_scipy():
    a = np.random.default_rng(33).uniform(-1, 1, (4, 4)) + 3 * np.eye(4)
    np.testing.assert_allclose(np.asarray(jax.scipy.linalg.sqrtm(a)), sla.sqrtm(a), **C128_TOL)
    c = _cmat(34, (3, 3), shift=2.0)
    np.testing.assert_allclose(np.asarray(jax.scipy.linalg.sqrtm(c)), sla.sqrtm(c), **C128_TOL)
    f = np.asarray(jax.scipy.linalg.funm(a, jnp.exp))
    assert f.dtype == np.complex128
    np.testing.assert_allclose(f, sla.expm(a), **C128_TOL)
    f2, err = jax.scipy.linalg.funm(c, jnp.sin, disp=False)
    np.testing.assert_allclose(np.asarray(f2), sla.funm(c, np.sin), **C128_TOL)
    assert 0 < float(err) <= 1
    t, z = sla.schur(np.random.default_rng(35).uniform(-1, 1, (5, 5)), output="real")
    tc, zc = jax.scipy.linalg.rsf2csf(t, z)
    rt, rz = sla.rsf2csf(t, z)
    np.testing.assert_allclose(np.asarray(tc), rt, **C128_TOL)
    np.testing.assert_allclose(np.asarray(zc), rz, **C128_TOL)
    with pytest.raises(NotImplementedError, match="Blocked"):
        jax.scipy.linalg.sqrtm(a, blocksize=2)
    with pytest.raises(ValueError, match="expected square"):
        jax.scipy.linalg.funm(np.ones((2, 3)), jnp.exp)
    with pytest.raises(ValueError, match="must match"):
        jax.scipy.linalg.rsf2csf(np.eye(3), np.eye(2))


def test_eig_implementation_enum_is_accepted():
    a = np.diag([1.0, 2.0, 3.0])
    w = lax.linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                       implementation=lax.linalg.EigImplementation.LAPACK)[0]
    np.testing.assert_allclose(_sorted(w), [1, 2, 3])
