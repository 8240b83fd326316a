"""The real Schur form of real matrices (`lax.linalg.schur`,
`jax.scipy.linalg.schur(a, output='real')`): values recorded from JAX 0.10.2
(LAPACK `gees`), the standardized 2x2 blocks, SciPy's `rsf2csf` on the
result, jit, vmap against a loop, batching, float32 / float64 and JAX's
errors. The invariants over random matrices are op-table records
(tests/op_table/real_schur.py)."""
import numpy as np
import pytest
import scipy.linalg as sla

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax

pytestmark = pytest.mark.usefixtures("x64")

# recorded from JAX 0.10.2 (jax.lax.linalg.schur, float64, CPU)
A3 = np.array([[1., 2, 3], [-4, 5, 6], [7, -8, 9]])
T3 = np.array([[5.999999999999987, -8.111233230445404, -1.306331781615214],
               [0.0, 4.500000000000005, 11.754935318243644],
               [0.0, -1.680145357273727, 4.500000000000005]])
Z3 = np.array([[-0.5597950281465573, -0.3765343399002878, 0.7381405132752499],
               [-0.6717540337758688, -0.31533653767550945, -0.6703054424012016],
               [-0.48515569106034806, 0.8710825212818103, 0.07641463569945282]])
A4 = np.array([[0.5, -1.2, 0.3, 2.0], [1.1, 0.4, -0.7, 0.2], [-0.3, 0.9, 1.5, -0.6], [0.8, -0.2, 0.1, -1.0]])
T4 = np.array([[-1.6632243127577433, -1.2025610026369598, -0.5071649982908285, -0.0745738265293576],
               [0.0, 0.8827200241215774, 0.8752260850419745, -0.2040560123709444],
               [0.0, -1.9588929376894093, 0.8827200241215774, -0.7191661509342573],
               [0.0, 0.0, 0.0, 1.2977842645145898]])
Z4 = np.array([[0.5837064279139843, -0.5494080297149121, 0.5019075520133954, 0.324848321726609],
               [-0.24367154760761017, 0.5835898490955908, 0.6639785268016146, 0.39897315807639777],
               [-0.02216626026919083, 0.002828588269906577, -0.5227053462562505, 0.8522204978696598],
               [-0.7742219577124415, -0.5979679790806215, 0.18439209899941664, 0.09494319363040292]])


def _signs_like(z, z_ref):
    """The column signs that align `z` with `z_ref` (a real Schur form is
    unique up to them, for a fixed eigenvalue order)."""
    return np.where(np.sum(z * z_ref, axis=0) < 0, -1.0, 1.0)


def _check_form(a, t, z, tol):
    n = a.shape[-1]
    np.testing.assert_allclose(z @ t @ z.T, a, rtol=tol, atol=tol)
    np.testing.assert_allclose(z.T @ z, np.eye(n), atol=tol)
    np.testing.assert_array_equal(np.tril(t, -2), 0)
    for i in range(1, n):
        if t[i, i - 1] != 0:
            # a standardized 2x2 block: equal diagonal, off-diagonal of opposite signs
            assert t[i - 1, i - 1] == t[i, i]
            assert t[i - 1, i] * t[i, i - 1] < 0
            assert i + 1 == n or t[i + 1, i] == 0
            assert i < 2 or t[i - 1, i - 2] == 0


@pytest.mark.parametrize("a,t_ref,z_ref", [(A3, T3, Z3), (A4, T4, Z4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_schur_matches_recorded_jax(a, t_ref, z_ref, dtype):
    t, z = lax.linalg.schur(a.astype(dtype))
    assert t.dtype == z.dtype == np.dtype(dtype)
    t, z = np.asarray(t, np.float64), np.asarray(z, np.float64)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    _check_form(a, t, z, 10 * tol)
    s = _signs_like(z, z_ref)
    np.testing.assert_allclose(z * s, z_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(s[:, None] * t * s, t_ref, rtol=tol, atol=tol)


def test_schur_matches_scipy_and_eigvals():
    rng = np.random.default_rng(40)
    for n in (2, 3, 6, 9):
        a = rng.uniform(-1, 1, (n, n))
        t, z = (np.asarray(v) for v in jax.scipy.linalg.schur(a))
        _check_form(a, t, z, 1e-11)
        ts, zs = sla.schur(a, output="real")
        s = _signs_like(z, zs)
        np.testing.assert_allclose(s[:, None] * t * s, ts, atol=1e-10)
        np.testing.assert_allclose(z * s, zs, atol=1e-10)
        w = np.sort_complex(np.linalg.eigvals(t))
        np.testing.assert_allclose(w, np.sort_complex(np.linalg.eigvals(a)), atol=1e-10)


def test_schur_special_matrices():
    rot = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)
    t, z = lax.linalg.schur(rot)
    np.testing.assert_array_equal(np.asarray(t), rot)  # recorded from JAX 0.10.2: unchanged
    np.testing.assert_array_equal(np.asarray(z), np.eye(2))
    tri = np.array([[1.0, 2, 0], [0, 3, 0], [0, 0, 4]], np.float32)
    t, z = lax.linalg.schur(tri)
    np.testing.assert_array_equal(np.asarray(t), tri)
    np.testing.assert_array_equal(np.asarray(z), np.eye(3))
    # real eigenvalues of a 2x2 block are split, as LAPACK's dlanv2
    t, z = lax.linalg.schur(np.array([[1.0, 2], [3, 4]], np.float32))
    np.testing.assert_allclose(np.asarray(t), [[-0.37228107, -1.0], [0.0, 5.3722816]], rtol=1e-6, atol=1e-6)
    t, z = jax.scipy.linalg.schur(np.zeros((0, 0), np.float32))
    assert t.shape == z.shape == (0, 0)
    (t_nan, z_nan) = lax.linalg.schur(np.array([[1.0, np.nan], [0.0, 1.0]]))
    assert np.isnan(np.asarray(t_nan)).all() and np.isnan(np.asarray(z_nan)).all()


def test_schur_jit_vmap_batching():
    rng = np.random.default_rng(41)
    a = rng.uniform(-1, 1, (3, 5, 5))
    t, z = lax.linalg.schur(a)
    tj, zj = jax.jit(lax.linalg.schur)(a)
    np.testing.assert_array_equal(np.asarray(tj), np.asarray(t))
    np.testing.assert_array_equal(np.asarray(zj), np.asarray(z))
    tv, zv = jax.vmap(lax.linalg.schur)(a)
    for k in range(3):
        tk, zk = lax.linalg.schur(a[k])
        np.testing.assert_array_equal(np.asarray(tv)[k], np.asarray(tk))
        np.testing.assert_array_equal(np.asarray(zv)[k], np.asarray(zk))
        np.testing.assert_array_equal(np.asarray(t)[k], np.asarray(tk))
    (t_only,) = lax.linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_array_equal(np.asarray(t_only), np.asarray(t))


def test_rsf2csf_of_schur_output():
    a = np.random.default_rng(42).uniform(-1, 1, (5, 5))
    t, z = jax.scipy.linalg.schur(a)
    tc, zc = jax.scipy.linalg.rsf2csf(t, z)
    rt, rz = sla.rsf2csf(np.asarray(t), np.asarray(z))
    np.testing.assert_allclose(np.asarray(tc), rt, atol=1e-10)
    np.testing.assert_allclose(np.asarray(zc), rz, atol=1e-10)
    np.testing.assert_allclose(np.asarray(zc) @ np.asarray(tc) @ np.conj(np.asarray(zc)).T, a, atol=1e-10)


def test_schur_errors_and_options_as_jax():
    a = np.random.default_rng(43).uniform(-1, 1, (3, 3))
    # JAX 0.10.2: sort_eig_vals raises on real and complex input; select_callable alone is ignored
    for x in (a, a.astype(complex)):
        with pytest.raises(NotImplementedError, match="sort feature of LAPACK's gees"):
            lax.linalg.schur(x, sort_eig_vals=True)
    t, z = lax.linalg.schur(a, select_callable=lambda w: w)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(lax.linalg.schur(a)[0]))
    with pytest.raises(TypeError, match="schur does not accept dtype int32"):
        jax.scipy.linalg.schur(np.eye(3, dtype=np.int32))
    with pytest.raises(ValueError, match="Expected 'output'"):
        jax.scipy.linalg.schur(a, output="x")
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jax.grad(lambda x: jnp.sum(lax.linalg.schur(x)[0]))(a)
