"""Operator-table records of `jax.random`. They take raw `uint32[2]` keys;
draws with an independent NumPy model (tests/test_random.py) compare bit for
bit, the other distributions are checked by shape, dtype and a statistics
predicate (`OpRecord.check`), and all of them by jit bitwise and vmap over
keys.
"""
import dataclasses
import warnings

import numpy as np

import microjax_rs
import microjax_rs.random  # noqa: F401  (records resolve names on it)

from ._record import Case, OpRecord, canonicalize_dtype, case_triples, x64_enabled


def _np_random_model():
    import test_random as tr  # the NumPy model of JAX's Threefry draws

    return tr


def keys(rng, shapes, dtype):
    """Raw `uint32[..., 2]` keys (one per shape: the key's batch shape)."""
    return [rng.integers(0, 2**32, size=tuple(s) + (2,), dtype=np.uint64).astype(np.uint32) for s in shapes]


def seeds(rng, shapes, dtype):
    return [rng.integers(0, 10_000, size=tuple(s)).astype(np.int32) for s in shapes]


def key_and_counts(rng, shapes, dtype):
    return keys(rng, shapes[:1], dtype) + [rng.integers(0, 2**32, size=tuple(s), dtype=np.uint64).astype(np.uint32)
                                           for s in shapes[1:]]


def _stats(shape, dtype, predicate, wide=True):
    """(reference giving shape and dtype, check on the drawn values); default
    float / int draws are 64-bit under x64, as JAX."""
    return dict(ref=lambda *a, **kw: np.zeros(shape, dtype), check=predicate,
                out_dtype=lambda dt, x64: canonicalize_dtype(_WIDE.get(np.dtype(dtype), dtype) if wide else dtype, x64))


def _near(value, want, tol):
    assert abs(float(value) - want) < tol, f"statistic {float(value):.4f} not within {tol} of {want}"


def _moments(mean, std, tol=0.1, lo=-np.inf, hi=np.inf):
    def check(x):
        assert np.all((x >= lo) & (x <= hi)), f"draws outside [{lo}, {hi}]"
        _near(x.mean(), mean, tol)
        if std is not None:
            _near(x.std(), std, tol)

    return check


def _frequencies(probs, tol=0.04):
    def check(x):
        counts = np.bincount(np.asarray(x).ravel().astype(np.int64), minlength=len(probs))
        assert counts.size == len(probs), f"values outside [0, {len(probs)})"
        np.testing.assert_allclose(counts / x.size, probs, atol=tol)

    return check


def _is_permutation(n):
    def check(x):
        np.testing.assert_array_equal(np.sort(x), np.arange(n))

    return check


def _mvn_check(x):
    np.testing.assert_allclose(x.mean(axis=0), [1.0, -1.0], atol=0.1)
    np.testing.assert_allclose(np.cov(x.T), [[1.0, 0.5], [0.5, 2.0]], atol=0.2)


_WIDE = {np.dtype("float32"): np.dtype("float64"), np.dtype("int32"): np.dtype("int64")}
N = 4000
_KEY = ((),)  # one raw key argument


def _rand_rec(name, kwargs, shape, dtype, check, args=(), wide=True):
    return OpRecord(name=f"random.{name}", args_maker=keys, dtypes=("uint32",), differentiable=False,
                    cases=(Case(_KEY, tuple(args), dict(kwargs)),), **_stats(shape, dtype, check, wide))


def _typed(fn_name):
    """`random.key_data(random.<fn_name>(x))`: typed keys seen through their raw data."""
    return lambda fn: lambda x: microjax_rs.random.key_data(fn(x))


def _quietly(fn):
    """`fn` with its FutureWarning silenced (random.shuffle is deprecated, as in JAX)."""

    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return fn(*args, **kwargs)

    return call


def _random_records():
    tr = _np_random_model()
    exact = dict(args_maker=keys, dtypes=("uint32",), differentiable=False, tol={})
    log_p = np.log(np.array([0.2, 0.3, 0.5], np.float32))
    return (
        OpRecord(name="random.bits", ref=lambda k, shape: (tr.np_bits64 if x64_enabled() else tr.np_bits32)(k, shape),
                 cases=case_triples((_KEY, ((3, 4),), {}), (_KEY, ((5,),), {}), (_KEY, ((),), {})), **exact),
        OpRecord(name="random.split", ref=lambda k, num=2: tr.np_split(k, num),
                 cases=case_triples((_KEY, (), {}), (_KEY, (5,), {}), (_KEY, (1,), {})), **exact),
        OpRecord(name="random.fold_in", ref=lambda k, d: tr.np_fold_in(k, d),
                 cases=case_triples((_KEY, (7,), {}), (_KEY, (0,), {}), (_KEY, (123456,), {})), **exact),
        OpRecord(name="random.threefry_2x32", ref=lambda k, c: tr.np_hash_counts(k, c),
                 cases=case_triples((((), (6,)), (), {}), (((), (5,)), (), {}), (((), (2, 3)), (), {})),
                 **{**exact, "args_maker": key_and_counts}),
        OpRecord(name="random.uniform",
                 ref=lambda k, shape: tr.np_uniform64(k, shape) if x64_enabled() else tr.np_uniform32(k, shape),
                 cases=case_triples((_KEY, ((3, 4),), {}), (_KEY, ((7,),), {})), **exact),
        OpRecord(name="random.PRNGKey", ref=lambda s: np.array([0, s], np.uint32),
                 cases=case_triples((((),), (), {})), **{**exact, "args_maker": seeds, "dtypes": ("int32",)}),
        OpRecord(name="random.key", ref=lambda s: np.array([0, s], np.uint32), adapt=_typed("key"),
                 cases=case_triples((((),), (), {})), **{**exact, "args_maker": seeds, "dtypes": ("int32",)}),
        OpRecord(name="random.wrap_key_data", ref=lambda k: k.copy(), adapt=_typed("wrap_key_data"),
                 cases=case_triples((_KEY, (), {}),), **exact),
        OpRecord(name="random.key_data", ref=lambda k: k.copy(),
                 adapt=lambda fn: lambda k: fn(microjax_rs.random.wrap_key_data(k)),
                 cases=case_triples((_KEY, (), {}),), **exact),
        _rand_rec("normal", {"shape": (N,)}, (N,), np.float32, _moments(0.0, 1.0)),
        _rand_rec("gumbel", {"shape": (N,)}, (N,), np.float32, _moments(0.5772, 1.2825)),
        _rand_rec("exponential", {"shape": (N,)}, (N,), np.float32, _moments(1.0, 1.0, lo=0.0)),
        _rand_rec("truncated_normal", {"shape": (N,)}, (N,), np.float32, _moments(0.0, 0.5398, lo=-1.0, hi=1.0),
                  args=(-1.0, 1.0)),
        _rand_rec("bernoulli", {"p": 0.3, "shape": (N,)}, (N,), np.bool_, _moments(0.3, None, tol=0.04)),
        _rand_rec("rademacher", {"shape": (N,)}, (N,), np.int32, _moments(0.0, 1.0, lo=-1, hi=1)),
        _rand_rec("randint", {"shape": (N,), "minval": 0, "maxval": 5}, (N,), np.int32,
                  _frequencies([0.2] * 5)),
        _rand_rec("categorical", {"logits": log_p, "shape": (N,)}, (N,), np.int32, _frequencies([0.2, 0.3, 0.5])),
        _rand_rec("choice", {"a": 4, "shape": (N,)}, (N,), np.int32, _frequencies([0.25] * 4)),
        _rand_rec("permutation", {"x": 10}, (10,), np.int32, _is_permutation(10)),
        dataclasses.replace(_rand_rec("shuffle", {"x": np.arange(10, dtype=np.int32)}, (10,), np.int32, _is_permutation(10),
                                      wide=False), adapt=_quietly),
        _rand_rec("multivariate_normal", {"mean": np.array([1.0, -1.0], np.float32),
                                          "cov": np.array([[1.0, 0.5], [0.5, 2.0]], np.float32), "shape": (N,)},
                  (N, 2), np.float32, _mvn_check, wide=False),  # the dtype of mean / cov, as JAX
    )


RECORDS = _random_records()
