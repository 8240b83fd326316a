"""The parts of the smaller `jax.scipy` modules that the operator table does
not fit: `interpolate.RegularGridInterpolator`, `spatial.transform.Rotation`
and `Slerp` (pytrees), `optimize.minimize` (BFGS, against values recorded
from JAX 0.10.2), the Krylov solvers of `sparse.linalg` (higher-order: `A`
and `M` may be functions, `b` a pytree), and `flatten_util.ravel_pytree` /
`test_util.check_grads` against JAX's behaviour. SciPy is the reference for
values."""
import numpy as np
import pytest
import scipy.interpolate as sp_interpolate
from scipy.spatial.transform import Rotation as SpRotation
from scipy.spatial.transform import Slerp as SpSlerp

import microjax_rs as jax
import microjax_rs.numpy as jnp
import microjax_rs.scipy  # noqa: F401  (jax.scipy.<module> attribute access)
from microjax_rs.flatten_util import ravel_pytree
from microjax_rs.scipy.interpolate import RegularGridInterpolator
from microjax_rs.scipy.optimize import OptimizeResults, minimize
from microjax_rs.scipy.sparse.linalg import bicgstab, cg, gmres
from microjax_rs.scipy.spatial.transform import Rotation, Slerp
from microjax_rs.test_util import check_grads
from fd import num_grad


def test_module_attributes_after_import_scipy():
    import microjax_rs.scipy.cluster.vq as vq_mod

    assert jax.scipy.signal.convolve is not None and jax.scipy.integrate.trapezoid is not None
    assert jax.scipy.ndimage.map_coordinates is not None and jax.scipy.optimize.minimize is minimize
    assert jax.scipy.sparse.linalg.cg is cg and jax.scipy.spatial.transform.Rotation is Rotation
    assert jax.scipy.cluster.vq.vq is vq_mod.vq and jax.scipy.interpolate.RegularGridInterpolator is not None
    assert jax.experimental.ode.odeint is not None


# ----------------------------------------------------------------- RegularGridInterpolator

_GRID = (np.array([0.0, 0.3, 1.0, 1.5]), np.array([-1.0, 0.0, 0.5, 2.0, 3.0]))


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, -2.0])
def test_regular_grid_interpolator_matches_scipy(method, fill_value):
    rng = np.random.default_rng(0)
    values = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    pts = rng.uniform(-0.3, 3.2, (2, 3, 2)).astype(np.float32)
    pts[..., 0] = rng.uniform(-0.2, 1.7, (2, 3))
    got = RegularGridInterpolator(_GRID, values, method=method, fill_value=fill_value)(pts)
    want = sp_interpolate.RegularGridInterpolator(_GRID, values.astype(np.float64), method=method,
                                                  bounds_error=False, fill_value=fill_value)(pts)
    assert got.shape == (2, 3) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_regular_grid_interpolator_trailing_axes_and_method_override():
    rng = np.random.default_rng(1)
    values = rng.uniform(-1, 1, (4, 5, 2))
    pts = rng.uniform(0.0, 1.4, (6, 2))
    interp = RegularGridInterpolator(_GRID, values)
    ref = sp_interpolate.RegularGridInterpolator(_GRID, values)
    np.testing.assert_allclose(np.asarray(interp(pts)), ref(pts), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(interp(pts, method="nearest")), ref(pts, method="nearest"),
                               rtol=1e-5, atol=1e-6)
    # a tuple of coordinate arrays
    np.testing.assert_allclose(np.asarray(interp((pts[:, 0], pts[:, 1]))), ref(pts), rtol=1e-5, atol=1e-6)


def test_regular_grid_interpolator_is_a_pytree_under_jit_vmap_grad():
    rng = np.random.default_rng(2)
    values = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    pts = rng.uniform(0.0, 1.4, (7, 2)).astype(np.float32)
    interp = RegularGridInterpolator(_GRID, values)
    leaves = jax.tree_util.tree_leaves(interp)
    assert len(leaves) == 4  # two grid axes, the values, the fill value
    eager = np.asarray(interp(pts))
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda f, p: f(p))(interp, pts)), eager)
    np.testing.assert_allclose(np.asarray(jax.vmap(interp)(pts[:, None, :]))[:, 0], eager, rtol=1e-6)
    # linear in the values: d sum(f(p)) / d values = the interpolation weights' sums
    g = jax.grad(lambda v: jnp.sum(RegularGridInterpolator(_GRID, v)(pts)))(jnp.asarray(values))
    eye = np.eye(values.size, dtype=np.float32).reshape((-1,) + values.shape)
    want = [float(np.sum(np.asarray(RegularGridInterpolator(_GRID, e)(pts)))) for e in eye]
    np.testing.assert_allclose(np.asarray(g).reshape(-1), want, rtol=1e-5, atol=1e-6)


def test_regular_grid_interpolator_errors():
    values = np.zeros((4, 5), np.float32)
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(_GRID, values, bounds_error=True)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(_GRID, values, method="cubic")
    with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 dimensions"):
        RegularGridInterpolator(_GRID + (np.arange(2.0),), values)
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator(_GRID, values)(np.zeros((2, 3), np.float32))


# ----------------------------------------------------------------- Rotation / Slerp


@pytest.fixture
def quats():
    return np.random.default_rng(3).normal(size=(5, 4))


def _close(got, want, tol=1e-9):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def test_rotation_conversions_match_scipy(quats, x64):
    r, s = Rotation.from_quat(quats), SpRotation.from_quat(quats)
    _close(r.as_quat(), s.as_quat())
    _close(r.as_quat(canonical=True), s.as_quat(canonical=True))
    _close(r.as_quat(scalar_first=True), s.as_quat(scalar_first=True))
    _close(r.as_matrix(), s.as_matrix())
    _close(r.as_rotvec(), s.as_rotvec())
    _close(r.as_rotvec(degrees=True), s.as_rotvec(degrees=True))
    _close(r.as_mrp(), s.as_mrp())
    _close(r.magnitude(), s.magnitude())
    for seq in ("xyz", "ZYX", "zxz", "XYX", "yzx"):
        _close(r.as_euler(seq), s.as_euler(seq))
        _close(r.as_euler(seq, degrees=True), s.as_euler(seq, degrees=True))


def test_rotation_constructors_match_scipy(quats, x64):
    rng = np.random.default_rng(4)
    s = SpRotation.from_quat(quats)
    _close(Rotation.from_matrix(s.as_matrix()).as_matrix(), s.as_matrix())
    rv = rng.normal(size=(5, 3))
    for scale in (1.0, 1e-5):  # the small-angle series too
        _close(Rotation.from_rotvec(rv * scale).as_quat(), SpRotation.from_rotvec(rv * scale).as_quat())
    _close(Rotation.from_rotvec(rv, degrees=True).as_quat(), SpRotation.from_rotvec(rv, degrees=True).as_quat())
    _close(Rotation.from_mrp(rv * 0.3).as_quat(), SpRotation.from_mrp(rv * 0.3).as_quat())
    for seq in ("xyz", "ZXY", "zyz", "xy", "Z"):
        ang = rng.uniform(-3, 3, (5, len(seq)))
        _close(Rotation.from_euler(seq, ang).as_matrix(), SpRotation.from_euler(seq, ang).as_matrix())
    _close(Rotation.from_euler("z", 90.0, degrees=True).as_matrix(),
           SpRotation.from_euler("z", 90, degrees=True).as_matrix())
    _close(Rotation.identity().as_matrix(), np.eye(3))


def test_rotation_gimbal_lock_recorded_from_jax(x64):
    # recorded from JAX 0.10.2 (x64): the degenerate middle angles put the
    # whole rotation into one outer angle
    cases = [("ZXZ", [0.3, np.pi, 0.2], [0.10000000000000009, -3.141592653589793, 0.0]),
             ("xyz", [0.3, np.pi / 2, 0.2], [0.10000000000000009, 1.5707963267948966, 0.0]),
             ("zxz", [0.3, 0.0, 0.2], [0.5, 0.0, 0.0]),
             ("XYZ", [0.3, -np.pi / 2, 0.2], [0.10000000000000009, -1.5707963267948963, 0.0])]
    for seq, angles, want in cases:
        q = SpRotation.from_euler(seq, angles).as_quat()
        _close(Rotation.from_quat(q).as_euler(seq), want, 1e-12)


def test_rotation_algebra_matches_scipy(quats, x64):
    rng = np.random.default_rng(5)
    r, s = Rotation.from_quat(quats), SpRotation.from_quat(quats)
    v = rng.normal(size=(5, 3))
    _close(r.apply(v), s.apply(v))
    _close(r.apply(v, inverse=True), s.apply(v, inverse=True))
    _close(r.apply(v[0]), s.apply(v[0]))
    _close(r[0].apply(v), s[0].apply(v))
    _close((r * r[::-1]).as_quat(), (s * s[::-1]).as_quat())
    _close(r.inv().as_matrix(), s.inv().as_matrix())
    _close(r.mean().as_matrix(), s.mean().as_matrix())
    w = rng.uniform(0.1, 1.0, 5)
    _close(r.mean(w).as_matrix(), s.mean(w).as_matrix())
    _close(Rotation.concatenate([r[:2], r[2:]]).as_quat(), r.as_quat())
    assert len(r) == 5 and r[1:3].quat.shape == (2, 4) and r.single is False and r[0].single is True


def test_rotation_pytree_under_jit_vmap_grad(quats):
    r = Rotation.from_quat(quats.astype(np.float32))
    assert isinstance(jax.jit(lambda r: r * r)(r), Rotation)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda r: r.as_matrix())(r)), np.asarray(r.as_matrix()),
                               rtol=1e-6, atol=1e-6)
    ones = jnp.ones(3)
    got = jax.vmap(lambda r: r.apply(ones))(r)
    np.testing.assert_allclose(np.asarray(got), SpRotation.from_quat(quats).apply(np.ones(3)), rtol=1e-5,
                               atol=1e-5)
    check_grads(lambda q: Rotation.from_quat(q).apply(ones), (jnp.asarray(quats[0], jnp.float32),), order=1,
                modes=["rev"])


def test_rotation_errors():
    r = Rotation.from_quat(np.array([0.0, 0.0, 0.0, 1.0], np.float32))
    with pytest.raises(TypeError, match="Single rotation is not subscriptable"):
        r[0]
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(r)
    with pytest.raises(NotImplementedError):
        Rotation.random(jax.random.key(0))
    with pytest.raises(ValueError, match="Expected consecutive axes to be different"):
        Rotation.from_euler("xxy", np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        Rotation.from_euler("xYz", np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Expected 3 axes"):
        r.as_euler("xy")
    stack = Rotation.from_quat(np.eye(4, dtype=np.float32))
    with pytest.raises(ValueError, match="to be 1 dimensional"):
        stack.mean(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="2 values and 4 rotations"):
        stack.mean(np.ones(2, np.float32))


def test_slerp_matches_scipy(quats, x64):
    times = np.array([0.0, 1.0, 2.5, 3.0, 4.0])
    r, s = Rotation.from_quat(quats), SpRotation.from_quat(quats)
    slerp, ref = Slerp.init(times, r), SpSlerp(times, s)
    t = np.array([0.0, 0.5, 1.2, 2.7, 3.9, 4.0])
    _close(slerp(t).as_matrix(), ref(t).as_matrix())
    one = slerp(2.0)
    assert one.single
    _close(one.as_matrix(), ref(2.0).as_matrix())
    _close(jax.jit(lambda sl, t: sl(t).as_quat())(slerp, t), np.asarray(slerp(t).as_quat()))


def test_slerp_errors(quats):
    r = Rotation.from_quat(quats.astype(np.float32))
    with pytest.raises(TypeError, match="must be a `Rotation` instance"):
        Slerp.init(np.arange(5.0), quats)
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(np.arange(1.0), r[:1])
    with pytest.raises(ValueError, match="got 5 rotations and 4 timestamps"):
        Slerp.init(np.arange(4.0), r)
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        Slerp.init(np.arange(5.0), r)(np.zeros((2, 2)))


# ----------------------------------------------------------------- minimize (BFGS)


def _rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _quad(x, A, b):
    return 0.5 * x @ A @ x - b @ x


def _himmelblau(x):
    return (x[0] ** 2 + x[1] - 11) ** 2 + (x[0] + x[1] ** 2 - 7) ** 2


_QA = [[3.0, 1, 0], [1, 4, 1], [0, 1, 2]]
_QB = [1.0, -2, 3]

# Recorded from JAX 0.10.2 with jax_enable_x64: (x, fun, success, status, nit, nfev). JAX's line
# search gives up (status 3, "zoom failed") on Rosenbrock's valley from these starts.
_BFGS_X64 = {
    "rosen": ([-1.2, 1.0], [-0.2778069614751315, 0.043338775200157394], 1.7472911993555371, False, 3, 8, 17),
    "rosen4": ([0.5, -0.3, 1.2, 0.8], [0.8863217203153224, 0.7930886816340057, 0.6366610828384109,
                                       0.38455298634660434], 0.2424929887821246, False, 3, 21, 29),
    "quad": ([0.0, 0.0, 0.0], [0.7368420001192015, -1.2105262546630242, 2.1052630609424408], -4.736842105263138,
             True, 0, 10, 11),
    "himmelblau": ([1.0, 1.0], [3.0000000228623844, 2.0000000344217685], 5.522134239364679e-14, True, 0, 8, 13),
    "rosen_near": ([0.9, 0.8], [0.9999999994136348, 0.9999999989530262], 1.925294253548198e-18, True, 0, 9, 16),
    "rosen_far": ([2.0, 2.0], [0.9999999946527616, 0.9999999891502032], 3.1005389304335506e-17, True, 0, 24, 37),
    "rosen_origin": ([0.0, 0.0], [0.17879488483310618, 0.0], 0.7765706554739193, False, 3, 1, 5),
}
_FUNS = {"rosen": (_rosen, ()), "rosen4": (_rosen, ()), "quad": (_quad, "AB"), "himmelblau": (_himmelblau, ()),
         "rosen_near": (_rosen, ()), "rosen_far": (_rosen, ()), "rosen_origin": (_rosen, ())}


def _problem(name, dtype):
    fun, args = _FUNS[name]
    if args:
        args = (jnp.asarray(_QA, dtype), jnp.asarray(_QB, dtype))
    return fun, jnp.asarray(_BFGS_X64[name][0], dtype), args


@pytest.mark.parametrize("name", sorted(_BFGS_X64))
def test_bfgs_matches_values_recorded_from_jax_x64(name, x64):
    fun, x0, args = _problem(name, jnp.float64)
    _, x, f, success, status, nit, nfev = _BFGS_X64[name]
    res = minimize(fun, x0, args, method="BFGS")
    assert isinstance(res, OptimizeResults)
    np.testing.assert_allclose(np.asarray(res.x), x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(float(res.fun), f, rtol=1e-9, atol=1e-12)
    assert (bool(res.success), int(res.status), int(res.nit), int(res.nfev)) == (success, status, nit, nfev)
    np.testing.assert_allclose(np.asarray(res.jac), np.asarray(jax.grad(fun)(res.x, *args)), rtol=1e-9, atol=1e-12)
    assert res.hess_inv.shape == (x0.shape[0],) * 2 and int(res.njev) == int(res.nfev)


def test_bfgs_float32_close_to_jax():
    # recorded from JAX 0.10.2 (float32); float32 rounding changes the last iterations
    res = minimize(_himmelblau, jnp.asarray([1.0, 1.0]), method="BFGS")
    assert bool(res.success) and res.x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(res.x), [3.0, 2.0], atol=1e-5)
    fun, x0, args = _problem("quad", jnp.float32)
    res = minimize(fun, x0, args, method="BFGS")
    np.testing.assert_allclose(np.asarray(res.x), [0.7368419766426086, -1.2105263471603394, 2.1052629947662354],
                               atol=1e-4)


def test_bfgs_under_jit_and_vmap_and_options():
    fun, x0, args = _problem("quad", jnp.float32)
    eager = minimize(fun, x0, args, method="BFGS")
    jitted = jax.jit(lambda x0, A, b: minimize(fun, x0, (A, b), method="bfgs"))(x0, *args)
    np.testing.assert_allclose(np.asarray(jitted.x), np.asarray(eager.x), rtol=1e-6, atol=1e-6)
    starts = jnp.stack([x0, x0 + 1.0])
    batched = jax.vmap(lambda s: minimize(fun, s, args, method="BFGS").x)(starts)
    np.testing.assert_allclose(np.asarray(batched), np.stack([np.asarray(eager.x)] * 2), atol=1e-4)
    capped = minimize(_rosen, jnp.asarray([-1.2, 1.0]), method="BFGS", options={"maxiter": 2})
    assert int(capped.nit) == 2 and int(capped.status) == 1 and not bool(capped.success)


def test_minimize_errors():
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(_rosen, jnp.zeros(2), args=[1], method="BFGS")
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(_rosen, jnp.zeros(2), method="nelder-mead")


# ----------------------------------------------------------------- Krylov solvers

_SOLVERS = {"cg": cg, "gmres": gmres, "bicgstab": bicgstab}


def _system(name, n=6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, n))
    A = x @ x.T + n * np.eye(n) if name == "cg" else x + 3 * np.eye(n)
    return A.astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)


@pytest.mark.parametrize("name", sorted(_SOLVERS))
def test_krylov_matrix_and_function_operators(name):
    solve = _SOLVERS[name]
    A, b = _system(name)
    want = np.linalg.solve(A.astype(np.float64), b)
    x, info = solve(A, b)
    assert info is None and x.dtype == np.float32
    np.testing.assert_allclose(np.asarray(x), want, atol=1e-4)
    x, _ = solve(lambda v: jnp.matmul(A, v), b, M=lambda v: v / jnp.diag(A), tol=1e-6)
    np.testing.assert_allclose(np.asarray(x), want, atol=1e-5)
    x, _ = solve(A, b, x0=jnp.asarray(want), maxiter=0)
    np.testing.assert_array_equal(np.asarray(x), want.astype(np.float32))


@pytest.mark.parametrize("name", sorted(_SOLVERS))
def test_krylov_pytrees_jit_vmap_jvp(name):
    solve = _SOLVERS[name]
    A, b = _system(name, seed=1)
    want = np.linalg.solve(A.astype(np.float64), b)

    def op(t):
        w = jnp.matmul(A, jnp.concatenate([t["a"], t["b"]]))
        return {"a": w[:2], "b": w[2:]}

    xt, _ = solve(op, {"a": b[:2], "b": b[2:]})
    np.testing.assert_allclose(np.concatenate([xt["a"], xt["b"]]), want, atol=1e-4)
    xj, _ = jax.jit(lambda A, b: solve(A, b))(A, b)
    np.testing.assert_allclose(np.asarray(xj), want, atol=1e-4)
    xs, _ = jax.vmap(lambda bb: solve(A, bb))(np.stack([b, 2 * b]))
    np.testing.assert_allclose(np.asarray(xs), np.stack([want, 2 * want]), atol=2e-4)
    # forward-mode: the solve is linear in b
    _, dx = jax.jvp(lambda bb: solve(A, bb, tol=1e-7)[0], (jnp.asarray(b),), (jnp.asarray(b),))
    np.testing.assert_allclose(np.asarray(dx), want, atol=1e-4)


@pytest.mark.parametrize("name", sorted(_SOLVERS))
def test_krylov_reverse_mode_is_implicit(name):
    # Through lax.custom_linear_solve, as JAX: d(A^-1 b) needs another solve, checked
    # against the closed form and against float64 finite differences.
    solve = _SOLVERS[name]
    A, b = _system(name, n=4, seed=2)
    A, b = A.astype(np.float64), b.astype(np.float64)
    with jax.enable_x64():
        x = np.linalg.solve(A, b)
        gb = jax.grad(lambda bb: jnp.sum(solve(A, bb, tol=1e-12)[0] ** 2))(b)
        np.testing.assert_allclose(np.asarray(gb), 2 * np.linalg.solve(A.T, x), rtol=1e-6, atol=1e-9)
        f = lambda M: jnp.sum(jnp.sin(solve(M, b, tol=1e-12)[0]))
        gA = jax.grad(f)(A)
        np.testing.assert_allclose(np.asarray(gA), num_grad(f, A), rtol=1e-5, atol=1e-7)


_KA = [[4.0, 1, 0, 0.5], [1, 3, 1, 0], [0, 1, 5, 1], [0.5, 0, 1, 2]]
_KN = [[4.0, 1, 0, 2], [-1, 3, 1, 0], [0, 2, 5, 1], [0.5, 0, -1, 2]]
_KB = [1.0, -2, 3, 0.5]
# recorded from JAX 0.10.2 (x64): iterates cut short by maxiter, so the iterations themselves are compared
_KRYLOV_PARTIAL = {
    "cg2": (cg, _KA, {"maxiter": 2},
            [0.4768919006382371, -1.1787733911906906, 0.8232038091463271, -0.06528999606507352]),
    "bicgstab2": (bicgstab, _KN, {"maxiter": 2},
                  [0.1536249555469256, -0.8736977182298047, 0.8288682245956734, 0.6245055393460603]),
    "gmres_r2": (gmres, _KN, {"restart": 2, "maxiter": 1},
                 [0.3387630900127876, -0.8297018006327821, 0.8260697442793541, 0.3976449759172042]),
    "gmres_r2_m2": (gmres, _KN, {"restart": 2, "maxiter": 2, "M": "jacobi"},
                    [0.1568847323571368, -0.8766258002441601, 0.8183687992231511, 0.618399360750334]),
    "gmres_incremental": (gmres, _KN, {"restart": 3, "maxiter": 1, "solve_method": "incremental"},
                          [0.1727484592103153, -0.8546676246035005, 0.8161029457477414, 0.6341566017493742]),
}


@pytest.mark.parametrize("name", sorted(_KRYLOV_PARTIAL))
def test_krylov_iterates_recorded_from_jax(name, x64):
    solve, A, kwargs, want = _KRYLOV_PARTIAL[name]
    A = jnp.asarray(A)
    if kwargs.get("M") == "jacobi":
        kwargs = {**kwargs, "M": lambda v: v / jnp.diag(A)}
    x, _ = solve(A, jnp.asarray(_KB), **kwargs)
    np.testing.assert_allclose(np.asarray(x), want, rtol=1e-12, atol=1e-14)


def test_krylov_errors():
    A, b = _system("cg")
    with pytest.raises(ValueError, match="matching tree structure"):
        cg(A, b, x0={"a": b})
    with pytest.raises(ValueError, match="matching shapes"):
        bicgstab(A, b, x0=b[:3])
    with pytest.raises(ValueError, match="invalid solve_method"):
        gmres(A, b, solve_method="qr")


# ----------------------------------------------------------------- flatten_util / test_util


def test_ravel_pytree_matches_jax():
    # behaviour recorded from JAX 0.10.2: promoted dtype, leaf order, round trip
    tree = {"a": jnp.ones((2, 3), jnp.float32), "b": (jnp.arange(3), jnp.asarray(2.0, jnp.float16)),
            "c": [jnp.asarray([True, False])]}
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32 and flat.shape == (12,)
    np.testing.assert_array_equal(np.asarray(flat), [1, 1, 1, 1, 1, 1, 0, 1, 2, 2, 1, 0])
    back = unravel(flat)
    assert jax.tree_util.tree_structure(back) == jax.tree_util.tree_structure(tree)
    assert [x.dtype for x in jax.tree_util.tree_leaves(back)] == [np.float32, np.int32, np.float16, np.bool_]
    assert ravel_pytree({"x": jnp.arange(3), "y": jnp.arange(2, dtype=jnp.int8)})[0].dtype == np.int32
    assert ravel_pytree([])[0].shape == (0,)
    with pytest.raises(ValueError):
        unravel(jnp.ones(3))
    with pytest.raises(TypeError, match="unravel function given array of dtype int32, but expected dtype float32"):
        unravel(flat.astype(jnp.int32))
    g = jax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))({"a": jnp.ones(2), "b": jnp.ones(1) * 3})
    np.testing.assert_array_equal(np.asarray(g["a"]), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g["b"]), [6.0])


def test_check_grads_matches_jax():
    check_grads(lambda x: jnp.sin(x) * x, (jnp.asarray([0.3, 0.5]),), order=2)
    check_grads(lambda x: jnp.sin(x) * x, (jnp.asarray([0.3, 0.5]),), order=2, modes=["rev"])
    wrong = jax.custom_jvp(jnp.sin)
    wrong.defjvp(lambda p, t: (jnp.sin(p[0]), 2 * t[0]))
    with pytest.raises(AssertionError):
        check_grads(wrong, (jnp.asarray([0.3]),), order=1)
