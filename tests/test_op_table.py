"""Table-driven checks for every record of tests/op_table.py.

For each (record, dtype, case):
* eager:  the microjax result equals the NumPy reference (shape and dtype
  exactly, values within the record's tolerance) and is a ``jax.Array``;
* jit:    ``jax.jit`` of the same call equals the eager result bit for bit,
  on the first (trace + compile) and on a cached call;
* transforms: one hook per transform in ``TRANSFORM_CHECKS``. ``grad`` and
  ``vmap`` are placeholders that SKIP until their issues land; replace the
  function body, keep the name.
"""
import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp  # noqa: F401  (the table resolves names on it)
from microjax_rs import lax  # noqa: F401

import op_table as ot
from op_table import x64_enabled

CASES = list(ot.all_cases())
IDS = [ot.case_id(*c) for c in CASES]
_X64_ONLY = ("float64", "int64", "uint64")


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
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True, err_msg=what
        )


def _assert_bitwise_equal(got: np.ndarray, want: np.ndarray, what: str):
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if np.ascontiguousarray(got).tobytes() != np.ascontiguousarray(want).tobytes():
        diff = np.flatnonzero(np.ascontiguousarray(got).view(np.uint8) != np.ascontiguousarray(want).view(np.uint8))
        raise AssertionError(
            f"{what}: not bit-identical (first differing byte {diff[0]}):\n got={got!r}\nwant={want!r}"
        )


# ----------------------------------------------------------------- table sanity


def test_foundation_slice_has_records():
    covered = {rec.dotted for rec in ot.OP_RECORDS}
    missing = [name for name in ot.FOUNDATION if name not in covered]
    assert not missing, f"operator table lacks records for {missing}"


def test_record_names_unique():
    names = [rec.name for rec in ot.OP_RECORDS]
    assert len(names) == len(set(names))
    assert len(IDS) == len(set(IDS)), "duplicate case ids"


@pytest.mark.parametrize("dotted", sorted({rec.dotted for rec in ot.OP_RECORDS}))
def test_public_name_resolves(dotted):
    assert callable(ot.resolve(dotted)), f"microjax_rs.{dotted} is not callable"


def test_reference_helpers():
    # The table's own references against hand-computed values.
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    np.testing.assert_array_equal(ot._lax_div(a, b), [3, -3, -3, 3])
    x = np.arange(6.0).reshape(2, 3)
    y = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ot._dot_general(x, y, (((1,), (0,)), ((), ()))), x @ y)
    np.testing.assert_array_equal(ot._dot_general(x, x, (((), ()), ((0,), (0,)))), x[:, :, None] * x[:, None, :])
    np.testing.assert_array_equal(
        ot._broadcast_in_dim(np.array([1, 2, 3]), (2, 3), (1,)), [[1, 2, 3], [1, 2, 3]]
    )
    np.testing.assert_array_equal(ot._select_n(np.array([True, False]), np.zeros(2), np.ones(2)), [1.0, 0.0])
    assert ot._reduce_max(np.zeros((0,), np.float32), (0,)) == -np.inf
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
    rtol, atol = ot.tolerance(rec, expected.dtype)
    _assert_close(got, expected, rtol, atol, f"{rec.name} eager vs NumPy")
    for a, b in zip(arrays, before):
        np.testing.assert_array_equal(a, b, err_msg="inputs were modified")


# ----------------------------------------------------------------- jit


@pytest.mark.parametrize("rec,dtype,case", CASES, ids=IDS)
def test_jit_matches_eager(rec, dtype, case):
    _skip_unsupported(dtype)
    arrays, args, kwargs = ot.make_inputs(rec, dtype, case)
    fn = _bound(rec, args, kwargs)
    want = _as_numpy(fn(*arrays), f"{rec.name} eager")
    jitted = jax.jit(fn)
    first = _as_numpy(jitted(*arrays), f"jit({rec.name})")
    _assert_bitwise_equal(first, want, f"jit({rec.name}) first call vs eager")
    again = _as_numpy(jitted(*arrays), f"jit({rec.name})")
    _assert_bitwise_equal(again, want, f"jit({rec.name}) cached call vs eager")


# ----------------------------------------------------------------- transform hooks
# Each hook receives (record, dtype, case) and either checks or skips. Later
# issues replace the placeholder bodies; a hook must never pass vacuously.


def check_grad(rec, dtype, case):
    if not rec.differentiable or not ot.is_float(ot.np_dtype(dtype)):
        pytest.skip(f"{rec.name} is not differentiable for {dtype}")
    pytest.skip("placeholder: grad/vjp/jvp not implemented yet (AD issue): numerical gradient check goes here")


def check_vmap(rec, dtype, case):
    if not case.shapes:
        pytest.skip(f"{rec.name}: no array arguments to batch")
    pytest.skip("placeholder: vmap not implemented yet (batching issue): vmap vs per-example loop goes here")


TRANSFORM_CHECKS = {"grad": check_grad, "vmap": check_vmap}


@pytest.mark.parametrize("check", sorted(TRANSFORM_CHECKS))
@pytest.mark.parametrize("rec,dtype,case", CASES, ids=IDS)
def test_transform(check, rec, dtype, case):
    _skip_unsupported(dtype)
    TRANSFORM_CHECKS[check](rec, dtype, case)
