"""The `jax._src.test_util` stand-in that JAX's own test files import: case
sampling identical to JAX 0.10.2's (so a case name denotes the same case in
both), seeded inputs, dtype lists, and the test-case assertions."""
import unittest
import zlib

import numpy as np
import pytest

pytest.importorskip("absl.testing", reason="absl-py (requirements-dev.txt) runs JAX's test-case base class")

import microjax_rs.numpy as jnp  # noqa: E402
from microjax_rs._src import test_util as jtu  # noqa: E402
from microjax_rs.config import config  # noqa: E402


def test_sample_product_picks_jax_cases():
    # Recorded from JAX 0.10.2's jax._src.test_util.sample_product_testcases.
    cases = jtu.sample_product_testcases([dict(s=1), dict(s=2), dict(s=3)], a=[0, 1, 2, 3, 4], b=["x", "y"])
    assert cases == [
        {"s": 1, "a": 4, "b": "y"}, {"s": 1, "a": 0, "b": "y"}, {"s": 3, "a": 2, "b": "y"},
        {"s": 3, "a": 0, "b": "y"}, {"s": 3, "a": 2, "b": "x"}, {"s": 1, "a": 3, "b": "x"},
        {"s": 2, "a": 4, "b": "y"}, {"s": 1, "a": 3, "b": "y"}, {"s": 1, "a": 4, "b": "x"},
        {"s": 1, "a": 0, "b": "x"}]
    assert len(jtu.sample_product_testcases(a=[1, 2])) == 2


def test_rand_default_is_seeded_as_jax():
    # Recorded from JAX 0.10.2: rand_default with the rng of a test named testFoo.
    rng = np.random.RandomState(zlib.adler32(b"testFoo"))
    x = jtu.rand_default(rng)((3,), np.float32)
    np.testing.assert_allclose(x, [4.8816767, 0.68247247, 4.3618326], rtol=1e-6)
    assert x.dtype == np.float32


def test_dtype_lists_follow_x64():
    assert not config.jax_enable_x64
    assert jtu.dtypes.floating == [np.float32]
    assert jtu.dtypes.all_integer == [np.int8, np.int16, np.int32]
    assert jtu.dtypes.inexact == [np.float32, np.complex64]


def test_rand_generators_shapes_and_specials():
    rng = np.random.RandomState(0)
    assert jtu.rand_int(rng, 0, 5)((100,), np.int32).max() < 5
    assert (jtu.rand_positive(rng)((50,), np.float32) >= 1).all()
    some_nan = jtu.rand_some_nan(rng)((400,), np.float32)
    assert np.isnan(some_nan).any() and not np.isnan(some_nan).all()
    assert isinstance(jtu.rand_default(rng)(jtu.PYTHON_SCALAR_SHAPE, np.float32), float)
    assert isinstance(jtu.rand_default(rng)(jtu.NUMPY_SCALAR_SHAPE, np.float32), np.float32)
    assert jtu.rand_bool(rng)((4, 3), np.bool_).dtype == np.bool_


def _sample_case():
    # Defined in a function so that pytest does not collect it itself.
    class Sample(jtu.JaxTestCase):
        @jtu.sample_product(n=[1, 2, 3])
        def test_sum(self, n):
            args_maker = lambda: [self.rng().randn(n).astype(np.float32)]
            self._CheckAgainstNumpy(np.sum, jnp.sum, args_maker, tol=1e-5)
            self._CompileAndCheck(jnp.sum, args_maker)

        def test_wrong(self):
            self.assertAllClose(jnp.ones(2), np.zeros(2, np.float32))

        def test_dtype_mismatch(self):
            self.assertAllClose(jnp.ones(2, jnp.int32), np.ones(2, np.float32))

    return Sample


def test_jax_test_case_runs_parameterized_cases():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(_sample_case())
    result = unittest.TestResult()
    suite.run(result)
    assert result.testsRun == 5
    failed = sorted(t.id().rsplit(".", 1)[1] for t, _ in result.failures)
    assert failed == ["test_dtype_mismatch", "test_wrong"]
    assert not result.errors


def test_src_dtypes_helpers_match_jax():
    # Recorded from JAX 0.10.2's jax._src.dtypes (x64 off).
    from microjax_rs._src import dtypes
    expected = {np.bool_: ("float32", "int32"), np.int8: ("float32", "int8"), np.int32: ("float32", "int32"),
                np.uint8: ("float32", "uint8"), np.int64: ("float64", "int64"), np.uint64: ("float64", "uint64"),
                np.float16: ("float16", "float16"), jnp.bfloat16: ("bfloat16", "bfloat16"),
                np.float32: ("float32", "float32")}
    for dt, (inexact, numeric) in expected.items():
        assert dtypes.to_inexact_dtype(dt).name == inexact, dt
        assert dtypes.to_numeric_dtype(dt).name == numeric, dt
    assert (dtypes.default_int_dtype(), dtypes.default_uint_dtype(), dtypes.default_float_dtype()) == (
        np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.float32))
    assert dtypes.is_weakly_typed(1.0) and not dtypes.is_weakly_typed(jnp.float32(1))
    assert dtypes.is_weakly_typed(jnp.asarray(1.0)) and dtypes.is_weakly_typed(jnp.array(1.0) + 1)
