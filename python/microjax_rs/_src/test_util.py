"""`jax._src.test_util` at JAX's path: the test-case base class, random input
generators, dtype lists and case sampling that JAX's own test files use, so
those files run against microjax_rs (`tools/jax_suite.py`).

Written for microjax_rs from the behaviour JAX's test files expect:
- `sample_product(*dict_lists, **value_lists)` picks cases from the cartesian
  product exactly as JAX 0.10.2 does (the same indices, in the same order:
  `numpy.random.RandomState(42).choice(n, m, replace=False)`, decoded
  mixed-radix, first argument fastest), so a case name denotes the same case
  under both libraries and their results can be compared case by case;
- `JaxTestCase.rng()` is seeded from the test method's name (Adler-32) as in JAX;
- the dtype lists (`dtypes.floating`, ...) hold what the current x64 mode
  supports: 64-bit types only with x64 on.

Needs `absl-py` (JAX's test files are absl parameterized test cases); it is
imported when this module is.
"""
import contextlib
import functools
import math
import os
import re
import warnings
import zlib

import numpy as np
from absl.testing import absltest, parameterized

from .. import dtypes as _dtypes
from ..config import config
from .. import numpy as jnp
from .. import tree_util
from .tables import SHORT_NAMES
from ..api import jit
from ..test_util import check_grads, check_jvp, check_vjp  # noqa: F401


NUM_GENERATED_CASES = int(os.getenv("JAX_NUM_GENERATED_CASES", "10"))

# --------------------------------------------------------------------------
# shapes

class ScalarShape:
    """A shape standing for a scalar of a given kind (Python or NumPy)."""

    def __init__(self, name):
        self.name = name

    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError("tuple index out of range")

    def __repr__(self):
        return self.name


PYTHON_SCALAR_SHAPE = ScalarShape("PYTHON_SCALAR_SHAPE")
NUMPY_SCALAR_SHAPE = ScalarShape("NUMPY_SCALAR_SHAPE")


def _dims_of_shape(shape):
    if isinstance(shape, ScalarShape):
        return ()
    if isinstance(shape, int):
        return (shape,)
    return tuple(shape)


def _cast_to_shape(value, shape, dtype):
    if shape is NUMPY_SCALAR_SHAPE:
        return np.dtype(dtype).type(value)
    if shape is PYTHON_SCALAR_SHAPE:
        return np.asarray(value).item()
    return value


_TO_32 = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.uint64): np.dtype(np.uint32),
          np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def _canonical(dtype):
    """`dtype` as the x64 mode stores it (64-bit types to 32 with x64 off);
    NumPy only, so it also answers for dtypes microjax_rs cannot hold."""
    dtype = np.dtype(dtype)
    return dtype if config.jax_enable_x64 else _TO_32.get(dtype, dtype)


def is_valid_shape(shape, dtype):
    """Python scalars exist only for the default bool/int/float/complex types."""
    return shape is not PYTHON_SCALAR_SHAPE or np.dtype(dtype) in (
        np.dtype(np.bool_), _canonical(np.int64), _canonical(np.float64), _canonical(np.complex128))


def format_shape_dtype_string(shape, dtype):
    if isinstance(shape, ScalarShape):
        return f"{shape}"
    name = np.dtype(dtype).name
    short = SHORT_NAMES.get(name, name)
    return f"{short}[{','.join(str(d) for d in _dims_of_shape(shape))}]"


# --------------------------------------------------------------------------
# dtype lists (what the current x64 mode supports)

def _supported(types):
    x64 = config.jax_enable_x64
    out = []
    for t in types:
        if not x64 and _canonical(t) != np.dtype(t):
            continue
        out.append(t)
    return out


def _supported_property(*types):
    """A `_DtypeLists` property: those of `types` the x64 mode supports."""
    return property(lambda self: _supported(list(types)))


class _DtypeLists:
    """`jtu.dtypes.<kind>`: the dtypes of each kind the x64 mode supports."""

    custom_floats = _supported_property(_dtypes.bfloat16)
    floating = _supported_property(np.float32, np.float64)
    all_floating = _supported_property(_dtypes.bfloat16, np.float16, np.float32, np.float64)
    integer = _supported_property(np.int32, np.int64)
    all_integer = _supported_property(np.int8, np.int16, np.int32, np.int64)
    unsigned = _supported_property(np.uint32, np.uint64)
    all_unsigned = _supported_property(np.uint8, np.uint16, np.uint32, np.uint64)
    complex = _supported_property(np.complex64, np.complex128)

    @property
    def boolean(self):
        return [np.bool_]

    @property
    def inexact(self):
        return self.floating + self.complex

    @property
    def all_inexact(self):
        return self.all_floating + self.complex

    @property
    def all(self):
        return self.all_integer + self.all_unsigned + self.all_inexact + self.boolean


dtypes = _DtypeLists()

# --------------------------------------------------------------------------
# tolerances

_TOLERANCE = {
    np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.int16): 0, np.dtype(np.int32): 0,
    np.dtype(np.int64): 0, np.dtype(np.uint8): 0, np.dtype(np.uint16): 0, np.dtype(np.uint32): 0,
    np.dtype(np.uint64): 0, np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15, np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}
if _dtypes.bfloat16 is not None:
    _TOLERANCE[np.dtype(_dtypes.bfloat16)] = 1e-2


def default_tolerance():
    return _TOLERANCE


def _dtype_of(x):
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return np.asarray(x).dtype


def tolerance(dtype, tol=None):
    """The tolerance for `dtype`: `tol` itself when a number, its entry when a
    dict (falling back to the default), else the default."""
    tol = {} if tol is None else tol
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = _canonical(dtype)
    return tol.get(dtype, _TOLERANCE.get(dtype, 0))


def join_tolerance(a, b):
    """Per dtype, the larger of two tolerances (numbers or dicts)."""
    a = {np.dtype(k): v for k, v in a.items()} if isinstance(a, dict) else {k: a for k in _TOLERANCE} if a else {}
    b = {np.dtype(k): v for k, v in b.items()} if isinstance(b, dict) else {k: b for k in _TOLERANCE} if b else {}
    out = dict(a)
    for k, v in b.items():
        out[k] = max(v, out.get(k, v))
    return out


# --------------------------------------------------------------------------
# random inputs

def _rand_dtype(rand, shape, dtype, scale=1.0, post=lambda x: x):
    dims = _dims_of_shape(shape)

    def draw():
        v = scale * rand(*dims)
        if np.issubdtype(np.dtype(dtype), np.unsignedinteger):
            v = np.abs(v)
        return np.asarray(v).astype(dtype)

    vals = draw() + 1j * draw() if np.issubdtype(np.dtype(dtype), np.complexfloating) else draw()
    return _cast_to_shape(np.asarray(post(vals), dtype), shape, dtype)


def rand_default(rng, scale=3):
    return functools.partial(_rand_dtype, rng.randn, scale=scale)


def rand_nonzero(rng):
    return functools.partial(_rand_dtype, rng.randn, scale=3,
                             post=lambda x: np.where(x == 0, np.array(1, x.dtype), x))


def rand_positive(rng):
    return functools.partial(_rand_dtype, rng.rand, scale=2, post=lambda x: x + 1)


def rand_small(rng):
    return functools.partial(_rand_dtype, rng.randn, scale=1e-3)


def rand_not_small(rng, offset=10.0):
    return functools.partial(_rand_dtype, rng.randn, scale=3.0,
                             post=lambda x: x + np.where(x > 0, offset, -offset))


def rand_small_positive(rng):
    return functools.partial(_rand_dtype, rng.rand, scale=2e-5)


def rand_uniform(rng, low=0.0, high=1.0):
    if not low < high:
        raise ValueError("rand_uniform needs low < high")
    return functools.partial(_rand_dtype, rng.rand, post=lambda x: x * (high - low) + low)


def rand_some_equal(rng):
    def post(x):
        flat = x.ravel()
        if flat.size == 0:
            return x
        return np.where(rng.rand(*np.shape(x)) < 0.5, flat[0], x)

    return functools.partial(_rand_dtype, rng.randn, scale=100.0, post=post)


def _with_specials(rng, specials):
    """A generator of default values where each of `specials` (value,
    probability) replaces entries of float arrays."""
    base = rand_default(rng)

    def gen(shape, dtype):
        if not np.issubdtype(np.dtype(dtype), np.inexact):
            return base(shape, dtype)
        if np.issubdtype(np.dtype(dtype), np.complexfloating):
            real = np.finfo(np.dtype(dtype)).dtype
            out = np.asarray(gen(shape, real)) + 1j * np.asarray(gen(shape, real))
            return _cast_to_shape(out.astype(dtype), shape, dtype)
        dims = _dims_of_shape(shape)
        vals = np.asarray(base(shape, dtype))
        for value, prob in specials:
            vals = np.where(rng.rand(*dims) < prob, np.array(value, dtype), vals)
        return _cast_to_shape(np.asarray(vals, dtype), shape, dtype)

    return gen


def rand_some_inf(rng):
    return _with_specials(rng, [(np.inf, 0.1), (-np.inf, 0.1)])


def rand_some_nan(rng):
    return _with_specials(rng, [(np.nan, 0.1)])


def rand_some_inf_and_nan(rng):
    return _with_specials(rng, [(np.inf, 0.1), (-np.inf, 0.1), (np.nan, 0.1)])


def rand_some_zero(rng):
    base = rand_default(rng)

    def gen(shape, dtype):
        vals = np.asarray(base(shape, dtype))
        vals = np.where(rng.rand(*_dims_of_shape(shape)) < 0.5, np.array(0, dtype), vals)
        return _cast_to_shape(np.asarray(vals, dtype), shape, dtype)

    return gen


def rand_int(rng, low=0, high=None):
    def gen(shape, dtype):
        hi = high
        if hi is None and low == 0:
            if not np.issubdtype(np.dtype(dtype), np.integer):
                raise ValueError("rand_int requires an explicit `high` value for non-integer types.")
            hi = np.iinfo(dtype).max
        draw_dtype = dtype if np.issubdtype(np.dtype(dtype), np.integer) else np.int64
        return rng.randint(low, high=hi, size=shape, dtype=draw_dtype).astype(dtype)

    return gen


def rand_unique_int(rng, high=None):
    def gen(shape, dtype):
        return rng.choice(np.arange(high or math.prod(shape), dtype=dtype), size=shape, replace=False)

    return gen


def rand_indices_unique_along_axis(rng):
    def gen(dim, shape, axis, allow_negative=True):
        rest = shape[:axis] + shape[axis + 1:]
        rows = [rng.choice(dim, size=shape[axis], replace=False) for _ in range(math.prod(rest))]
        idx = np.moveaxis(np.array(rows).reshape(rest + (shape[axis],)), -1, axis)
        if allow_negative:
            idx = np.where(rng.choice([False, True], idx.shape), idx - dim, idx)
        return idx

    return gen


def rand_bool(rng):
    def gen(shape, dtype):
        return _cast_to_shape(np.asarray(rng.rand(*_dims_of_shape(shape)) < 0.5, dtype), shape, dtype)

    return gen


def rand_fullrange(rng, standardize_nans=False):
    def gen(shape, dtype, post=lambda x: x):
        dtype = np.dtype(dtype)
        raw = rng.randint(0, 255, size=dtype.itemsize * math.prod(_dims_of_shape(shape)), dtype=np.uint8)
        vals = post(raw).view(dtype)
        if shape is PYTHON_SCALAR_SHAPE and dtype in (np.dtype(np.uint64), np.dtype(np.uint32)):
            vals = vals.astype(np.int64 if dtype == np.uint64 else np.int32)
        vals = vals.reshape(_dims_of_shape(shape))
        if standardize_nans and np.issubdtype(dtype, np.floating):
            vals[np.isnan(vals)] = np.nan
        return _cast_to_shape(vals, shape, dtype)

    return gen


# --------------------------------------------------------------------------
# case sampling

@functools.lru_cache(maxsize=None)
def _choice(n, m):
    return tuple(np.random.RandomState(42).choice(n, size=m, replace=False))


def sample_product_testcases(*args, **kw):
    """The cases `sample_product` runs: at most JAX_NUM_GENERATED_CASES
    (default 10) of the product, chosen as JAX chooses them."""
    dict_lists = [list(a) for a in args]
    value_lists = [(k, list(v)) for k, v in kw.items()]
    n = math.prod(len(a) for a in dict_lists) * math.prod(len(v) for _, v in value_lists)
    cases = []
    for i in _choice(n, min(n, NUM_GENERATED_CASES)):
        i = int(i)
        case = {}
        for a in dict_lists:
            case.update(a[i % len(a)])
            i //= len(a)
        for k, v in value_lists:
            case[k] = v[i % len(v)]
            i //= len(v)
        cases.append(case)
    return cases


def sample_product(*args, **kw):
    """Decorator: the test runs once per sampled case of the product."""
    return parameterized.parameters(*sample_product_testcases(*args, **kw))


def cases_from_list(xs):
    xs = list(xs)
    n = len(xs)
    return [xs[int(i)] for i in _choice(n, min(n, NUM_GENERATED_CASES))] if n else []


# --------------------------------------------------------------------------
# devices, versions, configuration

def device_under_test():
    return "cpu"


def test_device_matches(device_types):
    return device_under_test() in (device_types if not isinstance(device_types, str) else [device_types])


def skip_on_devices(*disabled):
    def decorator(test):
        @functools.wraps(test)
        def wrapper(self, *args, **kwargs):
            if device_under_test() in disabled:
                self.skipTest(f"not supported on {device_under_test()}")
            return test(self, *args, **kwargs)
        return wrapper
    return decorator


def run_on_devices(*enabled):
    def decorator(test):
        @functools.wraps(test)
        def wrapper(self, *args, **kwargs):
            if device_under_test() not in enabled:
                self.skipTest(f"only runs on {enabled}")
            return test(self, *args, **kwargs)
        return wrapper
    return decorator


def is_device_rocm():
    return False


def is_device_cuda():
    return False


def is_device_tpu(version=None, variant=""):
    return False


def is_device_tpu_at_least(version):
    return False


def is_cuda_compute_capability_at_least(capability):
    return False


def is_cuda_version_at_least(major, minor):
    return False


def is_optimized_build():
    return True


def parse_version(v):
    return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)\.(\d+)", v).groups())


def numpy_version():
    return parse_version(np.__version__)


def thread_unsafe_test(*args, **kwargs):
    if args and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


def ignore_warning(category=Warning, message=""):
    """Decorator / context manager ignoring warnings matching `message`."""
    class _Ignore(contextlib.ContextDecorator):
        def __enter__(self):
            self._ctx = warnings.catch_warnings()
            self._ctx.__enter__()
            warnings.filterwarnings("ignore", message=message, category=category)

        def __exit__(self, *exc):
            return self._ctx.__exit__(*exc)

    return _Ignore()


@contextlib.contextmanager
def strict_promotion_if_dtypes_match(dtypes):
    """JAX turns on strict promotion when all `dtypes` are equal; with equal
    dtypes standard and strict promotion agree, and microjax_rs has the
    standard mode only, so this changes nothing."""
    yield


def with_config(**kwds):
    """Class decorator: the tests run with these `jax_*` options set."""
    def decorator(cls):
        cls._config_overrides = {**getattr(cls, "_config_overrides", {}), **kwds}
        return cls
    return decorator


def with_jax_dtype_defaults(func, use_defaults=True):
    """`func` with 64-bit float/int results cast to the defaults of the x64 mode."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        result = func(*args, **kwargs)
        if not use_defaults:
            return result
        return tree_util.tree_map(
            lambda x: np.asarray(x).astype(_dtypes.canonicalize_dtype(np.asarray(x).dtype))
            if isinstance(x, (np.ndarray, np.generic)) else x, result)
    return wrapped


def promote_like_jnp(fun, inexact=False):
    """`fun` called with its array arguments promoted as `jnp` would."""
    def wrapper(*args, **kw):
        leaves, tree = tree_util.tree_flatten(args)
        if leaves:
            dtype = jnp.result_type(*leaves)
            if inexact and not np.issubdtype(np.dtype(dtype), np.inexact):
                dtype = jnp.result_type(dtype, jnp.float32)
            leaves = [np.asarray(x).astype(dtype) for x in leaves]
        return fun(*tree_util.tree_unflatten(tree, leaves), **kw)
    return wrapper


@contextlib.contextmanager
def assert_dot_precision(expected_precision, fun, *args):
    yield


def assert_dot_preferred_element_type(expected, fun, *args, **kwargs):
    return None


@contextlib.contextmanager
def count_pjit_cpp_cache_miss():
    """`count()`: jitted calls inside the block that missed jit's trace cache
    (each traced its function)."""
    from .. import _trace_cache

    start = _trace_cache.added
    yield lambda: _trace_cache.added - start


@contextlib.contextmanager
def count_aot_jit_cpp_cache_miss():
    """Calls of compiled (`jit(f).lower(...).compile()`) functions never trace
    again: `count()` is 0."""
    yield lambda: 0


def create_mesh(*args, **kwargs):
    from ..sharding import make_mesh
    return make_mesh(*args, **kwargs)


# --------------------------------------------------------------------------
# the test case

def _np(x):
    return np.asarray(x)


def _is_array_like(x):
    return isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)) or hasattr(x, "__array__")


class JaxTestCase(parameterized.TestCase):
    """JAX's test-case base: seeded `rng()`, pytree-aware `assertAllClose`,
    and the NumPy-reference and jit-against-eager checks."""

    _config_overrides = {}

    def setUp(self):
        super().setUp()
        self._rng = np.random.RandomState(zlib.adler32(self._testMethodName.encode()))
        # Options microjax_rs does not have (or a value it does not implement)
        # are left at their defaults; the test then shows what differs.
        saved = {}
        for k, v in self._config_overrides.items():
            try:
                old = config.read(k)
                config.update(k, v)
            except (AttributeError, KeyError, NotImplementedError, ValueError):
                continue
            saved[k] = old
        self.addCleanup(lambda: [config.update(k, v) for k, v in saved.items()])

    def rng(self):
        return self._rng

    # -- assertions
    def assertArraysEqual(self, actual, desired, *, check_dtypes=True, err_msg="", allow_object_dtype=False,
                          verbose=True):
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)
        np.testing.assert_array_equal(_np(actual), _np(desired), err_msg=err_msg, verbose=verbose)

    def assertArraysAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None, err_msg=""):
        self.assertEqual(np.shape(actual), np.shape(desired), err_msg)
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)
        dtype = _dtype_of(actual)
        atol = max(tolerance(dtype, atol), tolerance(_dtype_of(desired), atol))
        rtol = max(tolerance(dtype, rtol), tolerance(_dtype_of(desired), rtol))
        a, d = _np(actual), _np(desired)
        if a.dtype.kind == "V" or d.dtype.kind == "V":  # bfloat16
            a, d = a.astype(np.float32), d.astype(np.float32)
        np.testing.assert_allclose(a, d, atol=atol, rtol=rtol, err_msg=err_msg, equal_nan=True)

    def assertDtypesMatch(self, actual, desired, *, canonicalize_dtypes=True):
        if not config.jax_enable_x64 and canonicalize_dtypes:
            self.assertEqual(_canonical(_dtype_of(actual)), _canonical(_dtype_of(desired)))
        else:
            self.assertEqual(_dtype_of(actual), _dtype_of(desired))

    def assertAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None,
                       canonicalize_dtypes=True, err_msg=""):
        if isinstance(actual, dict) and isinstance(desired, dict):
            self.assertEqual(set(actual), set(desired))
            for k in desired:
                self.assertAllClose(actual[k], desired[k], check_dtypes=check_dtypes, atol=atol, rtol=rtol,
                                    canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)
        elif isinstance(actual, (tuple, list)) and isinstance(desired, (tuple, list)):
            self.assertEqual(len(actual), len(desired))
            for a, d in zip(actual, desired):
                self.assertAllClose(a, d, check_dtypes=check_dtypes, atol=atol, rtol=rtol,
                                    canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)
        elif _is_array_like(actual) and _is_array_like(desired):
            if check_dtypes:
                self.assertDtypesMatch(actual, desired, canonicalize_dtypes=canonicalize_dtypes)
            self.assertArraysAllClose(actual, desired, check_dtypes=False, atol=atol, rtol=rtol,
                                      err_msg=err_msg)
        elif actual == desired:
            return
        else:
            raise TypeError((type(actual), type(desired)))

    def assertRaisesWithLiteralMatch(self, exc_type, message, *args, **kwargs):
        return self.assertRaisesRegex(exc_type, re.escape(message), *args, **kwargs)

    @contextlib.contextmanager
    def assertNoWarnings(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield

    def assertDeprecationWarnsOrRaises(self, deprecation_id, message, *, error_class=ValueError):
        return self.assertWarnsRegex(DeprecationWarning, message)

    # -- checks
    def _CompileAndCheck(self, fun, args_maker, *, check_dtypes=True, tol=None, rtol=None, atol=None,
                         check_cache_misses=True):
        args = args_maker()
        eager = fun(*args)
        compiled = jit(fun)
        first = compiled(*args)
        second = compiled(*args_maker())
        self.assertAllClose(eager, first, check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol)
        self.assertAllClose(jit(fun)(*args), first, check_dtypes=check_dtypes, atol=atol or tol,
                            rtol=rtol or tol)
        del second

    def _CheckAgainstNumpy(self, numpy_reference_op, lax_op, args_maker, check_dtypes=True, tol=None,
                           atol=None, rtol=None, canonicalize_dtypes=True):
        args = args_maker()
        lax_ans = lax_op(*args)
        numpy_ans = numpy_reference_op(*args)
        self.assertAllClose(numpy_ans, lax_ans, check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol,
                            canonicalize_dtypes=canonicalize_dtypes)


class JaxTestLoader(absltest.TestLoader):
    pass
