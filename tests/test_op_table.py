"""Table-driven checks for every record of the operator table (tests/op_table/).

For each (record, dtype, case):
* eager:  the microjax result equals the NumPy reference (shape and dtype
  exactly, values within the record's tolerance) and is a ``jax.Array``;
* jit:    ``jax.jit`` of the same call equals the eager result bit for bit,
  on the first (trace + compile) and on a cached call;
* transforms: one hook per transform in ``TRANSFORM_CHECKS``: ``grad``
  (JVP against central differences, VJP against JVP, orders 1 and 2,
  float64) and ``vmap`` (per-example loop; every argument batched together
  and each alone; in/out axes 0, last, and mixed);
* errors: every bad input of a record (``OpRecord.errors``) raises its
  exception type with its message fragment, eagerly and under jit.

Tiers: ``make test`` runs each record with one dtype per dtype class (float,
signed int, unsigned int, bool, complex; float32 preferred) over all its
cases, and the vmap check with two of its three axis pairs (``VMAP_AXES``);
``MICROJAX_FULL=1`` runs every dtype and every pair (``ot.tier_cases``).
"""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp  # noqa: F401  (the table resolves names on it)
from microjax_rs import _core, lax  # noqa: F401

import op_table as ot
from op_table import dot, elementwise, reductions, structural, x64_enabled

from conftest import FULL

CASES = list(ot.tier_cases(full=FULL))
IDS = [ot.case_id(*c) for c in CASES]
_X64_ONLY = ("float64", "int64", "uint64", "complex128")


def _skip_unsupported(dtype: str):
    if dtype in _X64_ONLY and not x64_enabled():
        pytest.skip(f"{dtype} needs jax_enable_x64 (run with MICROJAX_ENABLE_X64=1)")
    if dtype == "bfloat16" and ot._BFLOAT16 is None:
        pytest.skip("bfloat16 needs ml_dtypes")


def _as_numpy(out, what: str) -> np.ndarray:
    assert isinstance(out, jax.Array), f"{what} returned {type(out).__name__}, not microjax_rs.Array"
    return np.asarray(out)


def _bound(rec, args, kwargs):
    fn = rec.resolve()
    return lambda *arrays: fn(*arrays, *args, **kwargs)


def _assert_close(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float, what: str):
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != expected {expected.shape}"
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != expected {expected.dtype}"
    if rtol == 0 and atol == 0:
        np.testing.assert_array_equal(got, expected, err_msg=what)
    else:
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(
            got.astype(wide), expected.astype(wide), rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )


def _assert_bitwise_equal(got: np.ndarray, want: np.ndarray, what: str):
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if np.ascontiguousarray(got).tobytes() != np.ascontiguousarray(want).tobytes():
        diff = np.flatnonzero(np.ascontiguousarray(got).view(np.uint8) != np.ascontiguousarray(want).view(np.uint8))
        raise AssertionError(
            f"{what}: not bit-identical (first differing byte {diff[0]}):\n got={got!r}\nwant={want!r}"
        )


# On a real GPU as the default device (`MICROJAX_PLATFORM=gpu pytest`),
# `jit` runs on the GPU while eager ops run on the CPU: their results agree
# to per-dtype tolerances (different math libraries and summation orders),
# not bit for bit. Integers, bools and the stand-in GPU stay bitwise.
JIT_ON_REAL_GPU = jax.default_backend() == "gpu" and (
    getattr(_core, "gpu_device_count", lambda: 0)() > 0)
GPU_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-12,
            "complex64": 2e-5, "complex128": 1e-12}


def _assert_jit_matches_eager(got: np.ndarray, want: np.ndarray, what: str):
    rtol = GPU_RTOL.get(str(want.dtype)) if JIT_ON_REAL_GPU else None
    if rtol is None:
        _assert_bitwise_equal(got, want, what)
        return
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if want.dtype.kind == "c":
        # Complex results come from sums of many terms (FFTs, products,
        # factorizations): the error scales with the largest magnitude.
        scale = max(1.0, float(np.abs(want[np.isfinite(want)]).max(initial=0)))
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                   rtol=rtol, atol=rtol * scale, equal_nan=True, err_msg=what)
        return
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=rtol, equal_nan=True, err_msg=what)


# ----------------------------------------------------------------- table sanity


def test_core_names_have_records():
    covered = {rec.dotted for rec in ot.RECORDS}
    missing = [name for name in ot.CORE_NAMES if name not in covered]
    assert not missing, f"operator table lacks records for {missing}"


def test_record_names_unique():
    names = [rec.name for rec in ot.RECORDS]
    assert len(names) == len(set(names))
    assert len(IDS) == len(set(IDS)), "duplicate case ids"


@pytest.mark.parametrize("dotted", sorted({rec.dotted for rec in ot.RECORDS}))
def test_public_name_resolves(dotted):
    assert callable(ot.resolve(dotted)), f"microjax_rs.{dotted} is not callable"


def test_reference_helpers():
    # The table's own references against hand-computed values.
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(elementwise._lax_div(a, b), [3, -3, -3, 3])
    x = np.arange(6.0).reshape(2, 3)
    y = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(dot._dot_general(x, y, (((1,), (0,)), ((), ()))), x @ y)
    np.testing.assert_array_equal(dot._dot_general(x, x, (((), ()), ((0,), (0,)))), x[:, :, None] * x[:, None, :])
    np.testing.assert_array_equal(
        structural._broadcast_in_dim(np.array([1, 2, 3]), (2, 3), (1,)), [[1, 2, 3], [1, 2, 3]]
    )
    np.testing.assert_array_equal(elementwise._select_n(np.array([True, False]), np.zeros(2), np.ones(2)), [1.0, 0.0])
    assert reductions._reduce_max(np.zeros((0,), np.float32), (0,)) == -np.inf
    assert ot.canonicalize_dtype(np.float64, x64=False) == np.float32
    assert ot.canonicalize_dtype(np.int64, x64=True) == np.int64


# ----------------------------------------------------------------- eager


@pytest.mark.parametrize("rec,dtype,case", CASES, ids=IDS)
def test_eager_matches_numpy(rec, dtype, case):
    _skip_unsupported(dtype)
    arrays, args, kwargs = ot.make_inputs(rec, dtype, case)
    expected = ot.reference(rec, dtype, arrays, args, kwargs, x64_enabled())
    before = [a.copy() for a in arrays]
    got = _as_numpy(rec.resolve()(*arrays, *args, **kwargs), rec.name)
    if rec.check is not None:  # no NumPy reference: shape, dtype and a predicate on the values
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype), f"{rec.name}: {got.shape} {got.dtype}"
        rec.check(got)
    else:
        rtol, atol = ot.tolerance(rec, expected.dtype)
        _assert_close(got, expected, rtol, atol, f"{rec.name} eager vs NumPy")
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b, err_msg="inputs were modified")


# ----------------------------------------------------------------- errors

ERROR_CASES = [(rec, i, err, mode) for rec in ot.RECORDS for i, err in enumerate(rec.errors) for mode in err.modes]


@pytest.mark.parametrize("rec,i,err,mode", ERROR_CASES,
                         ids=[f"{rec.name}-{i}-{mode}" for rec, i, err, mode in ERROR_CASES])
def test_errors(rec, i, err, mode):
    fn = rec.resolve()
    call = lambda *arrays: fn(*arrays, *err.args, **err.kwargs)  # noqa: E731
    if mode == "jit":
        call = jax.jit(call)
    with pytest.raises(err.exc) as info:
        call(*err.arrays)
    assert err.match in str(info.value), f"{rec.name}: message {str(info.value)!r} lacks {err.match!r}"


def test_error_records_resolve():
    # a record may hold only errors (an unsupported function); it still names a public callable
    for rec in ot.RECORDS:
        if not rec.cases:
            assert rec.errors, f"{rec.name} has neither cases nor errors"


# ----------------------------------------------------------------- jit


@pytest.mark.parametrize("rec,dtype,case", CASES, ids=IDS)
def test_jit_matches_eager(rec, dtype, case):
    _skip_unsupported(dtype)
    arrays, args, kwargs = ot.make_inputs(rec, dtype, case)
    fn = _bound(rec, args, kwargs)
    want = _as_numpy(fn(*arrays), f"{rec.name} eager")
    jitted = jax.jit(fn)
    first = _as_numpy(jitted(*arrays), f"jit({rec.name})")
    _assert_jit_matches_eager(first, want, f"jit({rec.name}) first call vs eager")
    again = _as_numpy(jitted(*arrays), f"jit({rec.name})")
    _assert_jit_matches_eager(again, want, f"jit({rec.name}) cached call vs eager")
    # Repeated runs of one program are bit-identical on every device.
    _assert_bitwise_equal(again, first, f"jit({rec.name}) cached call vs first call")


# ----------------------------------------------------------------- transform hooks
# Each hook receives (record, dtype, case) and either checks or skips (saying
# why); a hook must never pass vacuously.


def _fd_close(got, want, what, rtol=1e-5, atol=1e-7):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=atol * (1 + np.abs(np.asarray(want)).max(initial=0)),
                               err_msg=what)


def check_grad(rec, dtype, case):
    """JAX's check_grads method in float64: JVP against central differences
    along a random direction, VJP against JVP (<Jᵀc, t> = <c, J t>), and the
    same for the directional derivative of the gradient (order 2)."""
    if not rec.differentiable or not ot.is_float(ot.np_dtype(dtype)):
        pytest.skip(f"{rec.name} is not differentiable for {dtype}")
    if dtype != "float32":
        pytest.skip("gradients are checked once per record and case, in float64 (the float32 row)")
    jax.config.update("jax_enable_x64", True)
    try:
        arrays, args, kwargs = ot.make_inputs(rec, "float64", case)
        fn = _bound(rec, args, kwargs)
        idx = [i for i, a in enumerate(arrays) if ot.is_float(np.asarray(a).dtype)]
        if not idx:
            pytest.skip(f"{rec.name}: no float array arguments")
        out = np.asarray(fn(*arrays))
        if out.dtype != np.float64:
            pytest.skip(f"{rec.name}: {out.dtype} output (finite differences need float64)")
        if not np.all(np.isfinite(out)):
            pytest.skip(f"{rec.name}: non-finite output (e.g. max of an empty axis)")
        rng = np.random.default_rng(ot.case_seed(rec, dtype, case) + 1)
        w = rng.standard_normal(out.shape)
        xs = [np.asarray(arrays[i], np.float64) for i in idx]
        ts = [rng.standard_normal(x.shape) for x in xs]
        nums = tuple(range(len(idx)))

        def scalar(*vals):
            full = list(arrays)
            for i, v in zip(idx, vals):
                full[i] = v
            return jnp.sum(fn(*full) * w)

        def shifted(eps):
            return [x + eps * t for x, t in zip(xs, ts)]

        # order 1
        _, jt = jax.jvp(scalar, tuple(xs), tuple(ts))
        eps = 1e-6
        fd = (float(scalar(*shifted(eps))) - float(scalar(*shifted(-eps)))) / (2 * eps)
        _fd_close(jt, fd, f"{rec.name}: JVP vs finite differences", rtol=1e-5, atol=1e-6)
        grads = jax.grad(scalar, argnums=nums)(*xs)
        vjp_dot = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, ts))
        _fd_close(vjp_dot, jt, f"{rec.name}: <grad, t> vs JVP", rtol=1e-9, atol=1e-12)

        # order 2: d/deps <grad f(x + eps t), t>
        def dir_grad(*vals):
            g = jax.grad(scalar, argnums=nums)(*vals)
            return sum(jnp.sum(gi * ti) for gi, ti in zip(g, ts))

        _, ht = jax.jvp(dir_grad, tuple(xs), tuple(ts))
        eps2 = 1e-5
        fd2 = (float(dir_grad(*shifted(eps2))) - float(dir_grad(*shifted(-eps2)))) / (2 * eps2)
        _fd_close(ht, fd2, f"{rec.name}: second-order JVP vs finite differences", rtol=1e-4, atol=1e-5)
    finally:
        jax.config.update("jax_enable_x64", False)


def _stack_examples(rec, dtype, case, n):
    """n independent per-example input sets, and the per-example results."""
    dt = ot.np_dtype(dtype)
    rng = np.random.default_rng(ot.case_seed(rec, dtype, case) + 7)
    arrays0, args, kwargs = ot.make_inputs(rec, dtype, case)
    examples = [rec.args_maker(rng, case.shapes, dt) for _ in range(n)]
    return arrays0, examples, _bound(rec, args, kwargs)


# (in_axis, out_axis) pairs: the batch axis first, last, and moved between them.
# A primitive's batching rule sees only the in_axis; placing the result's batch
# axis (out_axis) is vmap's own step after the rule, the same for every record
# (tests/test_vmap.py checks it), so the CI tier skips the (-1, -1) pair, whose
# rule input repeats (-1, 0)'s; MICROJAX_FULL=1 runs all three.
VMAP_AXES = ((0, 0), (-1, -1), (-1, 0)) if FULL else ((0, 0), (-1, 0))


def check_vmap(rec, dtype, case):
    """vmap against a per-example loop: every argument batched together and
    each alone, with the (in_axis, out_axis) pairs of VMAP_AXES, batch sizes 1
    and 5 (and 0 for the output shape). The CI tier batches size 1 with every
    argument batched together only (which argument is batched is size 5's
    question; size 1 asks whether a rule mistakes the batch axis for a
    broadcast one)."""
    if not case.shapes:
        pytest.skip(f"{rec.name}: no array arguments to batch")
    for n in (1, 5):
        arrays0, examples, fn = _stack_examples(rec, dtype, case, n)
        k = len(arrays0)
        each_alone = k > 1 and (n > 1 or FULL)
        variants = [tuple(range(k))] + ([(j,) for j in range(k)] if each_alone else [])
        for batched in variants:
            ins = [[ex[i] if i in batched else arrays0[i] for i in range(k)] for ex in examples]
            want = np.stack([_as_numpy(fn(*a), rec.name) for a in ins])
            for in_axis, out_axis in VMAP_AXES:
                stacked = [np.stack([a[i] for a in ins], axis=in_axis) if i in batched else arrays0[i]
                           for i in range(k)]
                in_axes = tuple(in_axis if i in batched else None for i in range(k))
                got = _as_numpy(jax.vmap(fn, in_axes=in_axes, out_axes=out_axis)(*stacked), f"vmap({rec.name})")
                got = np.moveaxis(got, out_axis, 0)
                rtol, atol = ot.tolerance(rec, want.dtype)
                _assert_close(got, want, rtol, atol,
                              f"vmap({rec.name}) batched={batched} in_axis={in_axis} out_axis={out_axis} n={n}")
    # batch size 0: shape and dtype only
    arrays0, _, fn = _stack_examples(rec, dtype, case, 0)
    one = _as_numpy(fn(*arrays0), rec.name)
    empty = [np.zeros((0,) + np.shape(a), np.asarray(a).dtype) for a in arrays0]
    got = _as_numpy(jax.vmap(fn)(*empty), f"vmap({rec.name}) size 0")
    assert got.shape == (0,) + one.shape and got.dtype == one.dtype


TRANSFORM_CHECKS = {"grad": check_grad, "vmap": check_vmap}


def _transform_params():
    """(check, rec, dtype, case) per case and check, with ids `<case>-<check>`.
    The grad check runs on a differentiable record's float32 row only (in
    float64): the rows it would skip are not collected."""
    params, ids = [], []
    for c, cid in zip(CASES, IDS):
        rec, dtype, _ = c
        for check in sorted(TRANSFORM_CHECKS):
            if check == "grad" and not (rec.differentiable and dtype == "float32"):
                continue
            params.append((check, *c))
            ids.append(f"{cid}-{check}")
    return params, ids


TRANSFORM_PARAMS, TRANSFORM_IDS = _transform_params()


@pytest.mark.parametrize("check,rec,dtype,case", TRANSFORM_PARAMS, ids=TRANSFORM_IDS)
def test_transform(check, rec, dtype, case):
    _skip_unsupported(dtype)
    TRANSFORM_CHECKS[check](rec, dtype, case)
