"""Linear algebra beyond the operator table: decomposition identities
(L Lᵀ = A, P A = L U, Q R = A, V diag(w) Vᵀ = A, U S Vᵀ = A, expm of a
known matrix), JAX's output conventions, gradients of determinant /
log-determinant / inverse / solve / eigen-based losses against central
differences (float64), higher-order and transformed composition, and the
errors (shapes named)."""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
import microjax_rs.scipy.linalg as jsl
from microjax_rs import lax

from fd import num_grad


def _spd(rng, n, batch=()):
    x = rng.uniform(-1, 1, size=batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def _dom(rng, m, n, batch=()):
    return rng.uniform(-1, 1, size=batch + (m, n)) + 3 * np.eye(m, n)


# ----------------------------------------------------------------- identities


def test_cholesky_identity_and_non_pd_is_nan(x64):
    rng = np.random.default_rng(0)
    a = _spd(rng, 4, (2,))
    l = np.asarray(lax.linalg.cholesky(a))
    np.testing.assert_allclose(l @ np.swapaxes(l, -1, -2), a, rtol=1e-12, atol=1e-12)
    assert np.all(np.triu(l, 1) == 0)
    bad = np.asarray(jnp.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])))
    assert np.isnan(bad).all()
    u = np.asarray(jsl.cholesky(a[0]))  # scipy: upper by default
    np.testing.assert_allclose(u.T @ u, a[0], rtol=1e-12)


def test_lu_permutation_identity(x64):
    rng = np.random.default_rng(1)
    for m, n in [(4, 4), (5, 3), (3, 5)]:
        a = rng.standard_normal((m, n))
        lu, piv, perm = lax.linalg.lu(a)
        assert piv.dtype == np.int32 and perm.dtype == np.int32
        k = min(m, n)
        lu = np.asarray(lu)
        l = np.tril(lu[:, :k], -1) + np.eye(m, k)
        u = np.triu(lu[:k])
        np.testing.assert_allclose(l @ u, a[np.asarray(perm)], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(lax.linalg.lu_pivots_to_permutation(piv, m), perm)
        p, l2, u2 = jsl.lu(a)
        np.testing.assert_allclose(np.asarray(p) @ np.asarray(l2) @ np.asarray(u2), a, atol=1e-12)


def test_qr_modes(x64):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 3))
    q, r = jnp.linalg.qr(a)
    assert q.shape == (5, 3) and r.shape == (3, 3)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-12)
    q, r = jnp.linalg.qr(a, mode="complete")
    assert q.shape == (5, 5) and r.shape == (5, 3)
    np.testing.assert_allclose(np.asarray(q).T @ np.asarray(q), np.eye(5), atol=1e-12)
    assert jnp.linalg.qr(a, mode="r").shape == (3, 3)
    # LAPACK's sign convention, so the factors equal NumPy's.
    nq, nr = np.linalg.qr(a)
    np.testing.assert_allclose(np.asarray(jnp.linalg.qr(a).R), nr, atol=1e-12)
    with pytest.raises(ValueError, match="mode"):
        jnp.linalg.qr(a, mode="bogus")


def test_eigh_identity_and_conventions(x64):
    rng = np.random.default_rng(3)
    a = _spd(rng, 5, (3,))
    w, v = jnp.linalg.eigh(a)
    w, v = np.asarray(w), np.asarray(v)
    assert np.all(np.diff(w, axis=-1) >= 0)
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v, -1, -2), a, atol=1e-10)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12)
    # lax.linalg.eigh returns (v, w); UPLO='U' reads the upper triangle.
    lv, lw = lax.linalg.eigh(a)
    np.testing.assert_array_equal(np.asarray(lw), w)
    junk = np.triu(a[0]) + np.tril(np.full((5, 5), 7.0), -1)
    w_u = jnp.linalg.eigh(junk, UPLO="U", symmetrize_input=False).eigenvalues
    np.testing.assert_allclose(w_u, np.linalg.eigvalsh(a[0]), rtol=1e-12)


def test_svd_identity_and_conventions(x64):
    rng = np.random.default_rng(4)
    for shape in [(5, 3), (3, 5), (2, 4, 4)]:
        a = rng.standard_normal(shape)
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        np.testing.assert_allclose((np.asarray(u) * np.asarray(s)[..., None, :]) @ np.asarray(vh), a, atol=1e-12)
        np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
        uf, _, vf = jnp.linalg.svd(a)
        m, n = shape[-2:]
        assert uf.shape[-2:] == (m, m) and vf.shape[-2:] == (n, n)
    s_only = jnp.linalg.svd(np.ones((3, 2)), compute_uv=False)
    np.testing.assert_allclose(s_only, [np.sqrt(6.0), 0.0], atol=1e-12)
    # lax order (u, s, vh); rank-deficient full U still orthogonal.
    u, s, vh = lax.linalg.svd(np.ones((3, 2)))
    np.testing.assert_allclose(np.asarray(u).T @ np.asarray(u), np.eye(3), atol=1e-12)


def test_solve_inv_det_slogdet_values(x64):
    rng = np.random.default_rng(5)
    a = _dom(rng, 4, 4, (2,))
    b = rng.standard_normal((2, 4, 3))
    np.testing.assert_allclose(jnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=1e-10)
    # A 1-D b is one right-hand side for every matrix of the batch.
    np.testing.assert_allclose(jnp.linalg.solve(a, b[0, :, 0]), np.linalg.solve(a, b[0, :, :1])[..., 0], rtol=1e-10)
    np.testing.assert_allclose(jnp.linalg.inv(a), np.linalg.inv(a), rtol=1e-10)
    np.testing.assert_allclose(jnp.linalg.det(a), np.linalg.det(a), rtol=1e-10)
    perm = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert float(jnp.linalg.det(perm)) == -1.0
    sign, logabs = jnp.linalg.slogdet(-a)
    ws, wl = np.linalg.slogdet(-a)
    np.testing.assert_array_equal(sign, ws)
    np.testing.assert_allclose(logabs, wl, rtol=1e-12)
    s = _spd(rng, 3)
    for lower in (False, True):
        c = jsl.cho_factor(s, lower=lower)
        np.testing.assert_allclose(jsl.cho_solve(c, np.ones(3)), np.linalg.solve(s, np.ones(3)), rtol=1e-10)


def test_expm_known_values(x64):
    # Rotation generator: expm([[0, -t], [t, 0]]) = [[cos, -sin], [sin, cos]].
    t = 2.5
    got = np.asarray(jsl.expm(np.array([[0.0, -t], [t, 0.0]])))
    np.testing.assert_allclose(got, [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-12)
    # Nilpotent and diagonal, batched, and a large norm (several squarings).
    np.testing.assert_allclose(jsl.expm(np.array([[0.0, 1.0], [0.0, 0.0]])), [[1.0, 1.0], [0.0, 1.0]], atol=1e-14)
    d = np.stack([np.diag([1.0, -2.0]), np.diag([10.0, 0.5])])
    np.testing.assert_allclose(jsl.expm(d), np.stack([np.diag(np.exp(np.diag(x))) for x in d]), rtol=1e-12)


# ----------------------------------------------------------------- gradients


@pytest.mark.parametrize("name", ["det", "logdet", "inv", "solve", "eigh", "cholesky", "svd", "qr", "pinv",
                                  "expm"])
def test_loss_gradients_match_finite_differences(x64, name):
    rng = np.random.default_rng(6)
    a0 = _dom(rng, 3, 3)
    b0 = rng.standard_normal((3, 2))
    w = rng.standard_normal((3, 3))
    losses = {
        "det": lambda a: jnp.linalg.det(a),
        "logdet": lambda a: jnp.linalg.slogdet(a)[1],
        "inv": lambda a: jnp.sum(jnp.linalg.inv(a) * w),
        "solve": lambda a: jnp.sum(jnp.linalg.solve(a, b0) ** 2),
        "eigh": lambda a: jnp.sum(jnp.linalg.eigvalsh(a @ a.T) * jnp.arange(1.0, 4.0)),
        "cholesky": lambda a: jnp.sum(jnp.linalg.cholesky(a @ a.T) * w),
        "svd": lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False) ** 3),
        "qr": lambda a: jnp.sum(jnp.linalg.qr(a)[1] * w),
        "pinv": lambda a: jnp.sum(jnp.linalg.pinv(a) * w),
        "expm": lambda a: jnp.sum(jsl.expm(a * 0.7) * w),
    }
    f = losses[name]
    g = np.asarray(jax.grad(f)(a0))
    np.testing.assert_allclose(g, num_grad(f, a0), rtol=1e-6, atol=1e-7)


def test_eigenvector_loss_gradient_sign_invariant(x64):
    # v_i v_iᵀ does not depend on the sign of the eigenvector.
    rng = np.random.default_rng(7)
    s0 = _spd(rng, 4)
    w = rng.standard_normal((4, 4))

    def f(s):
        _, v = jnp.linalg.eigh(s)
        top = v[:, -1]
        return jnp.sum(jnp.outer(top, top) * w)

    np.testing.assert_allclose(jax.grad(f)(s0), num_grad(f, s0), rtol=1e-6, atol=1e-7)


def test_hessian_of_logdet(x64):
    # d²/dA² log det A [H, K] = -tr(A⁻¹ H A⁻¹ K).
    rng = np.random.default_rng(8)
    a = _dom(rng, 3, 3)
    h, k = rng.standard_normal((2, 3, 3))
    f = lambda x: jnp.linalg.slogdet(x)[1]
    hk = jax.jvp(lambda x: jax.grad(f)(x), (a,), (h,))[1]
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(np.sum(np.asarray(hk) * k), -np.trace(ai @ h @ ai @ k), rtol=1e-8)


def test_jit_vmap_grad_compose(x64):
    rng = np.random.default_rng(9)
    a = _dom(rng, 3, 3, (4,))
    b = rng.standard_normal((4, 3))
    f = lambda a, b: jnp.sum(jnp.linalg.solve(a, b) ** 2)
    got = jax.jit(jax.vmap(jax.grad(f)))(a, b)
    want = np.stack([jax.grad(f)(a[i], b[i]) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    jaxpr = str(jax.make_jaxpr(lambda x: lax.linalg.qr(x, full_matrices=False))(a[0]))
    assert "qr[" in jaxpr and "full_matrices=False" in jaxpr


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize("fn", [jnp.linalg.cholesky, jnp.linalg.inv, jnp.linalg.det, jnp.linalg.eigh,
                                jnp.linalg.slogdet, jsl.expm])
def test_non_square_raises_value_error_naming_shape(fn):
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        fn(np.zeros((2, 3), np.float32))


def test_rank_and_dtype_errors():
    with pytest.raises(ValueError, match=r"\(3,\)"):
        jnp.linalg.svd(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        lax.linalg.cholesky(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="int32"):
        lax.linalg.lu(np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"incompatible shapes a \(3, 3\) and b \(4,\)"):
        jnp.linalg.solve(np.eye(3, dtype=np.float32), np.ones(4, np.float32))
    with pytest.raises(NotImplementedError):
        jax.grad(lambda a: jnp.sum(jnp.linalg.qr(a, mode="complete")[0]))(np.ones((3, 2), np.float32))
    with pytest.raises(NotImplementedError):
        jax.grad(lambda a: jnp.sum(jnp.linalg.svd(a)[0]))(np.eye(2, dtype=np.float32))
