"""jax.random: JAX's Threefry bits, checked against the Random123 known answers,
an independent NumPy model of JAX's algorithms, and values JAX prints."""
import math

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import random

# ----------------------------------------------------------------------------
# NumPy model of JAX's threefry PRNG (written from JAX's documented algorithm)


def _rotl(v, r):
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def np_threefry(k0, k1, x0, x1):
    with np.errstate(over="ignore"):
        k0, k1, x0, x1 = (np.array(a, np.uint32, ndmin=1) for a in
                          np.broadcast_arrays(*(np.asarray(a, np.uint32) for a in (k0, k1, x0, x1))))
        ks = [k0, k1, k0 ^ k1 ^ np.uint32(0x1BD11BDA)]
        x = [x0 + ks[0], x1 + ks[1]]
        rots = [(13, 15, 26, 6), (17, 29, 16, 24)]
        for g in range(5):
            for r in rots[g % 2]:
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], r) ^ x[0]
            x[0] = x[0] + ks[(g + 1) % 3]
            x[1] = x[1] + ks[(g + 2) % 3] + np.uint32(g + 1)
    return x


def np_hash_counts(key, count):
    """JAX's `threefry_2x32`: first half of the counts paired with the second."""
    c = np.asarray(count, np.uint32).ravel()
    n = c.size
    if n % 2:
        c = np.concatenate([c, np.zeros(1, np.uint32)])
    h = c.size // 2
    y0, y1 = np_threefry(key[0], key[1], c[:h], c[h:])
    return np.concatenate([y0, y1])[:n].reshape(np.shape(count))


def np_split(key, n):
    y0, y1 = np_threefry(key[0], key[1], 0, np.arange(n))
    return np.stack([y0, y1], axis=1)


def np_fold_in(key, d):
    return np_hash_counts(key, np.array([0, d], np.uint32))


def np_bits32(key, shape):
    y0, y1 = np_threefry(key[0], key[1], 0, np.arange(math.prod(shape)))
    return (y0 ^ y1).reshape(shape)


def np_bits64(key, shape):
    y0, y1 = np_threefry(key[0], key[1], 0, np.arange(math.prod(shape)))
    return ((y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)).reshape(shape)


def np_uniform32(key, shape, lo=0.0, hi=1.0):
    f = ((np_bits32(key, shape) >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32)
    f = f - np.float32(1)
    lo, hi = np.float32(lo), np.float32(hi)
    # JAX's CPU backend fuses `f * (hi - lo) + lo` into one multiply-add: the
    # float32 product is exact in float64, so one float64 sum rounds it once
    # (up to a rare double rounding).
    fused = (f.astype(np.float64) * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)
    return np.maximum(lo, fused)


def np_uniform64(key, shape):
    b = (np_bits64(key, shape) >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
    return b.view(np.float64) - 1.0


def erfinv64(y):
    """erf^-1 by Newton's method on math.erf (float64 reference)."""
    x = 0.0
    for _ in range(100):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def np_normal32(key, shape):
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = np_uniform32(key, shape, lo, 1.0)
    return np.array([math.sqrt(2) * erfinv64(float(v)) for v in u.ravel()]).reshape(shape)


K0 = np.array([0, 0], np.uint32)
K42 = np.array([0, 42], np.uint32)


@pytest.fixture
def original_scheme():
    jax.config.update("jax_threefry_partitionable", False)
    yield
    jax.config.update("jax_threefry_partitionable", True)


# ----------------------------------------------------------------------------
# The primitive


KAT = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key,ctr,want", KAT)
def test_threefry_known_answers(key, ctr, want):
    args = [jnp.asarray(np.uint32(v)) for v in (*key, *ctr)]
    y0, y1 = random.threefry2x32_p.bind(*args)
    assert (int(y0), int(y1)) == want
    assert tuple(int(v[0]) for v in np_threefry(*key, *ctr)) == want


def test_threefry_broadcast_and_jit():
    k0, k1 = jnp.asarray(np.uint32(7)), jnp.asarray(np.uint32(9))
    x0 = jnp.asarray(np.arange(6, dtype=np.uint32).reshape(2, 3))
    x1 = jnp.asarray(np.arange(6, 12, dtype=np.uint32).reshape(2, 3))
    y0, y1 = random.threefry2x32_p.bind(k0, k1, x0, x1)
    r0, r1 = np_threefry(7, 9, np.asarray(x0), np.asarray(x1))
    np.testing.assert_array_equal(np.asarray(y0), r0)
    np.testing.assert_array_equal(np.asarray(y1), r1)
    j0, j1 = jax.jit(lambda *a: random.threefry2x32_p.bind(*a))(k0, k1, x0, x1)
    np.testing.assert_array_equal(np.asarray(j0), r0)
    assert y0.dtype == np.uint32 and y0.shape == (2, 3)


def test_threefry_rejects_bad_operands():
    u = jnp.asarray(np.uint32(1))
    with pytest.raises(TypeError, match="uint32"):
        random.threefry2x32_p.bind(u, u, u, jnp.asarray(np.int32(1)))
    with pytest.raises((TypeError, ValueError), match="threefry2x32"):
        random.threefry2x32_p.bind(u, u, jnp.zeros(2, "uint32"), jnp.zeros(3, "uint32"))


def test_threefry_in_jaxpr():
    jaxpr = jax.make_jaxpr(lambda k: random.uniform(k, (3,)))(random.PRNGKey(0))
    assert "threefry2x32" in str(jaxpr)


# ----------------------------------------------------------------------------
# Keys


def test_prngkey_values():
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(0)), [0, 0])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(42)), [0, 42])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(-1)), [0, 4294967295])
    # 32-bit mode keeps the low word of a large seed.
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(2**40 + 5)), [0, 5])
    assert random.PRNGKey(0).dtype == np.uint32 and random.PRNGKey(0).shape == (2,)


def test_prngkey_x64_seeds(x64):
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(2**40 + 5)), [256, 5])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(-1)), [4294967295, 4294967295])
    np.testing.assert_array_equal(np.asarray(random.PRNGKey(jnp.asarray(2**33 + 1))), [2, 1])


def test_prngkey_traced_seed():
    k = jax.jit(random.PRNGKey)(jnp.asarray(7))
    np.testing.assert_array_equal(np.asarray(k), [0, 7])


def test_prngkey_errors():
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(jnp.arange(2))
    with pytest.raises(TypeError, match="must be an integer"):
        random.PRNGKey(jnp.asarray(1.5))


def test_split_matches_jax_defaults():
    # JAX >= 0.5 (jax_threefry_partitionable=True): split(PRNGKey(0)).
    ks = random.split(random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(ks), [[1797259609, 2579123966],
                                                   [928981903, 3453687069]])
    np.testing.assert_array_equal(np.asarray(random.split(K42, 5)), np_split(K42, 5))
    assert random.split(K42, (2, 3)).shape == (2, 3, 2)
    np.testing.assert_array_equal(np.asarray(random.split(K42, (2, 3))).reshape(6, 2),
                                  np_split(K42, 6))


def test_original_scheme_values(original_scheme):
    # The values JAX printed before 0.5 (jax_threefry_partitionable=False).
    ks = random.split(random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(ks), [[4146024105, 967050713],
                                                   [2718843009, 1272950319]])
    assert np.float32(random.uniform(random.PRNGKey(0))) == np.float32(0.41845703)
    np.testing.assert_allclose(float(random.normal(random.PRNGKey(0))), -0.20584226, rtol=1e-6)
    bits = np.asarray(random.bits(K42, (5,)))
    np.testing.assert_array_equal(bits, np_hash_counts(K42, np.arange(5, dtype=np.uint32)))


def test_fold_in():
    np.testing.assert_array_equal(np.asarray(random.fold_in(K42, 3)), np_fold_in(K42, 3))
    f = jax.jit(random.fold_in)
    np.testing.assert_array_equal(np.asarray(f(K42, jnp.asarray(3))), np_fold_in(K42, 3))
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        random.fold_in(K42, jnp.arange(2))


def test_typed_keys():
    k = random.key(42)
    assert k.shape == () and str(k.dtype) == "key<fry>"
    np.testing.assert_array_equal(np.asarray(random.key_data(k)), K42)
    ks = random.split(k, 3)
    assert isinstance(ks, random.PRNGKeyArray) and ks.shape == (3,)
    np.testing.assert_array_equal(np.asarray(random.key_data(ks)), np_split(K42, 3))
    np.testing.assert_array_equal(np.asarray(random.key_data(ks[1])), np_split(K42, 3)[1])
    w = random.wrap_key_data(jnp.asarray(K42))
    assert float(random.uniform(w)) == float(random.uniform(K42))
    # Typed keys go through jit and vmap as pytrees.
    out = jax.jit(lambda k: random.normal(k, (2,)))(k)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(random.normal(K42, (2,))))
    v = jax.vmap(lambda k: random.uniform(k))(ks)
    assert v.shape == (3,)


def test_key_dtype_is_a_prng_key_subdtype():
    k = random.key(0)
    assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, jax.dtypes.extended)
    # A key array itself is not a dtype (JAX 0.10.2 under NumPy 2.4: ValueError).
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="Could not convert"):
        jnp.issubdtype(k, jax.dtypes.prng_key)
    assert not jnp.issubdtype(k.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, jax.dtypes.prng_key)
    assert not jnp.issubdtype(np.dtype("uint32"), jax.dtypes.prng_key)


def _kd(k):
    return np.asarray(random.key_data(k))


@pytest.mark.parametrize("jit", [False, True])
def test_key_arrays_stack_concatenate_where(jit):
    ks = random.split(random.key(42), 4)
    other = random.split(random.key(7), 4)
    wrap = jax.jit if jit else (lambda f: f)
    s = wrap(lambda a, b: jnp.stack([a, b], axis=1))(ks, other)
    assert s.shape == (4, 2) and str(s.dtype) == "key<fry>"
    np.testing.assert_array_equal(_kd(s), np.stack([_kd(ks), _kd(other)], axis=1))
    c = wrap(lambda a, b: jnp.concatenate([a, b[:2]]))(ks, other)
    assert c.shape == (6,)
    np.testing.assert_array_equal(_kd(c), np.concatenate([_kd(ks), _kd(other)[:2]]))
    pick = jnp.array([True, False, True, False])
    w = wrap(lambda p, a, b: jnp.where(p, a, b))(pick, ks, other)
    want = np.where(np.asarray(pick)[:, None], _kd(ks), _kd(other))
    np.testing.assert_array_equal(_kd(w), want)
    # The stacked keys draw what each key draws alone.
    draws = jax.vmap(lambda k: random.uniform(k))(c)
    np.testing.assert_array_equal(np.asarray(draws[4]), np.asarray(random.uniform(other[0])))


def test_key_array_shape_methods():
    ks = random.split(random.key(1), 6).reshape(2, 3)
    np.testing.assert_array_equal(_kd(ks.T), np.swapaxes(_kd(ks), 0, 1))
    np.testing.assert_array_equal(_kd(ks.ravel()), _kd(ks).reshape(6, 2))
    assert ks.reshape(1, 6).squeeze().shape == (6,)
    assert ks.reshape(1, 6).squeeze(0).shape == (6,)


def test_key_arrays_do_not_mix_with_plain_arrays():
    k = random.key(0)
    with pytest.raises(TypeError, match="cannot mix typed PRNG key arrays"):
        jnp.stack([k, jnp.zeros(2, jnp.uint32)])
    with pytest.raises(TypeError, match="cannot mix typed PRNG key arrays"):
        jnp.where(True, k, jnp.zeros(2, jnp.uint32))
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
        jnp.concatenate([k, k])


def test_key_data_errors():
    with pytest.raises(TypeError, match="key_data.shape to end with"):
        random.uniform(jnp.zeros(3, "uint32"))
    with pytest.raises(TypeError, match="key_data.dtype = uint32"):
        random.uniform(jnp.zeros(2, "int32"))
    with pytest.raises(TypeError, match="accepts a single key"):
        random.normal(random.split(K42, 2))
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        random.normal(3)


# ----------------------------------------------------------------------------
# Samplers: exact bits


def test_bits_and_uniform_bits():
    np.testing.assert_array_equal(np.asarray(random.bits(K42, (7,))), np_bits32(K42, (7,)))
    u = random.uniform(random.PRNGKey(0))
    assert np.float32(u) == np_uniform32(K0, ())
    assert u.dtype == np.float32 and u.shape == ()
    u = np.asarray(random.uniform(K42, (3, 4)))
    np.testing.assert_array_equal(u, np_uniform32(K42, (3, 4)))
    u = np.asarray(random.uniform(K42, (50,), minval=-2.0, maxval=3.0))
    np.testing.assert_array_equal(u, np_uniform32(K42, (50,), -2.0, 3.0))
    assert u.min() >= -2 and u.max() < 3


def test_normal_values():
    z = np.asarray(random.normal(K42, (20,)))
    assert z.dtype == np.float32
    np.testing.assert_allclose(z, np_normal32(K42, (20,)), rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(float(random.normal(random.PRNGKey(0))),
                               np_normal32(K0, ()), rtol=2e-6)


def test_64bit_draws(x64):
    b = np.asarray(random.bits(K42, (4,)))
    assert b.dtype == np.uint64
    np.testing.assert_array_equal(b, np_bits64(K42, (4,)))
    u = np.asarray(random.uniform(K42, (6,)))
    assert u.dtype == np.float64
    np.testing.assert_array_equal(u, np_uniform64(K42, (6,)))
    assert random.randint(K42, (3,), 0, 10).dtype == np.int64
    assert random.normal(K42, (2,)).dtype == np.float64


def test_small_float_dtypes():
    for dt in ("float16", "bfloat16"):
        u = random.uniform(K42, (100,), dtype=dt)
        assert str(u.dtype) == dt
        a = np.asarray(u).astype(np.float32)
        assert a.min() >= 0 and a.max() < 1
    u16 = np.asarray(random.uniform(K42, (8,), dtype="float16"))
    mant = np_bits32(K42, (8,)).astype(np.uint16) >> np.uint16(6)
    np.testing.assert_array_equal(u16, mant.astype(np.float16) * np.float16(2.0 ** -10))


def test_randint_model():
    lo, hi = 3, 17
    k1, k2 = np_split(K42, 2)
    hb, lb = np_bits32(k1, (40,)), np_bits32(k2, (40,))
    span = np.uint32(hi - lo)
    mult = np.uint32((2 ** 16 % int(span)) ** 2 % int(span))
    with np.errstate(over="ignore"):
        want = lo + ((hb % span) * mult + lb % span) % span
    got = np.asarray(random.randint(K42, (40,), lo, hi))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want.astype(np.int32))
    # Degenerate and full ranges.
    np.testing.assert_array_equal(np.asarray(random.randint(K42, (5,), 4, 4)), 4)
    u8 = np.asarray(random.randint(K42, (200,), 0, 256, dtype="uint8"))
    assert u8.dtype == np.uint8 and u8.max() > 200
    ranged = np.asarray(random.randint(K42, (2, 3), jnp.asarray([0, 10, 20]), 25))
    assert (ranged >= np.array([0, 10, 20])).all() and (ranged < 25).all()


def test_bernoulli_gumbel_exponential_models():
    u = np_uniform32(K42, (30,))
    np.testing.assert_array_equal(np.asarray(random.bernoulli(K42, 0.3, (30,))), u < 0.3)
    b = random.bernoulli(K42, jnp.asarray([0.1, 0.9]))
    assert b.dtype == np.bool_ and b.shape == (2,)
    g = np.asarray(random.gumbel(K42, (30,)))
    tiny = np.finfo(np.float32).tiny
    ug = np_uniform32(K42, (30,), tiny, 1.0)
    np.testing.assert_allclose(g, -np.log(-np.log(ug)), rtol=1e-5, atol=1e-6)
    e = np.asarray(random.exponential(K42, (30,)))
    np.testing.assert_allclose(e, -np.log1p(-u), rtol=1e-5, atol=1e-7)
    assert (e >= 0).all()


def test_categorical_is_gumbel_argmax():
    logits = jnp.asarray(np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)))
    c = random.categorical(K42, logits)
    assert c.shape == (2,) and c.dtype == np.int32
    g = np.asarray(random.gumbel(K42, (2, 3)))
    np.testing.assert_array_equal(np.asarray(c), np.argmax(g + np.asarray(logits), axis=-1))
    c2 = random.categorical(K42, logits, shape=(4, 2))
    assert c2.shape == (4, 2)
    draws = np.asarray(random.categorical(K42, jnp.log(jnp.asarray([0.2, 0.8])), shape=(4000,)))
    assert abs(draws.mean() - 0.8) < 0.03
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        random.categorical(K42, logits, shape=(3,))
    with pytest.raises(ValueError, match="categorical parameter shapes must be broadcast"):
        random.categorical(K42, jnp.zeros((2, 2, 3)), shape=(2,))


def test_permutation_and_choice():
    p = np.asarray(random.permutation(K42, 10))
    assert sorted(p.tolist()) == list(range(10))
    # JAX's shuffle: one round of a stable sort by fresh random 32-bit keys.
    _, sub = np_split(K42, 2)
    np.testing.assert_array_equal(p, np.argsort(np_bits32(sub, (10,)), kind="stable"))
    x = jnp.arange(12.0).reshape(4, 3)
    px = np.asarray(random.permutation(K42, x))
    assert sorted(px[:, 0].tolist()) == [0.0, 3.0, 6.0, 9.0]
    np.testing.assert_array_equal(px[:, 1] - px[:, 0], 1.0)
    pi = np.asarray(random.permutation(K42, x, axis=1, independent=True))
    assert (np.sort(pi, axis=1) == np.asarray(x)).all()
    with pytest.raises(TypeError, match="x must be an integer or at least 1-dimensional"):
        random.permutation(K42, 2.5)
    c = np.asarray(random.choice(K42, 5, (100,)))
    assert c.shape == (100,) and set(c.tolist()) <= set(range(5))
    c = np.asarray(random.choice(K42, jnp.arange(10) * 2, (5,), replace=False))
    assert len(set(c.tolist())) == 5 and all(v % 2 == 0 for v in c)
    cp = np.asarray(random.choice(K42, 3, (2000,), p=jnp.asarray([0.0, 0.3, 0.7])))
    assert 0 not in cp and abs((cp == 2).mean() - 0.7) < 0.05
    cn = np.asarray(random.choice(K42, 4, (3,), replace=False, p=jnp.asarray([.1, .2, .3, .4])))
    assert len(set(cn.tolist())) == 3
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(K42, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="shape argument of jax.random.choice must be a sequence"):
        random.choice(K42, 3, 5)


def test_shuffle_is_deprecated_permutation():
    with pytest.warns(FutureWarning):
        s = random.shuffle(K42, jnp.arange(10))
    np.testing.assert_array_equal(np.asarray(s), np.asarray(random.permutation(K42, 10)))


def test_truncated_normal():
    t = np.asarray(random.truncated_normal(K42, -1.0, 2.0, (2000,)))
    assert t.dtype == np.float32 and t.min() > -1 and t.max() < 2
    t = random.truncated_normal(K42, jnp.zeros(3), jnp.ones((2, 1)))
    assert t.shape == (2, 3)
    with pytest.raises(ValueError, match="truncated_normal parameter shapes"):
        random.truncated_normal(K42, jnp.zeros((2, 3)), 1.0, (3,))


def test_multivariate_normal():
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    mean = np.array([1.0, -1.0], np.float32)
    s = np.asarray(random.multivariate_normal(K42, jnp.asarray(mean), jnp.asarray(cov), (4000,)))
    assert s.shape == (4000, 2) and s.dtype == np.float32
    np.testing.assert_allclose(s.mean(0), mean, atol=0.08)
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.15)
    z = np.asarray(random.normal(K42, (4000, 2)))
    np.testing.assert_allclose(s, mean + z @ np.linalg.cholesky(cov).T, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="cov.shape == \\(..., n, n\\)"):
        random.multivariate_normal(K42, jnp.zeros(2), jnp.eye(3))


# ----------------------------------------------------------------------------
# Statistics, shapes, transformations


def test_normal_statistics():
    z = np.asarray(random.normal(random.PRNGKey(1), (100_000,)), np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.02
    u = np.asarray(random.uniform(random.PRNGKey(2), (100_000,)), np.float64)
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002


SAMPLERS = [
    ("uniform", lambda k: random.uniform(k, (2, 3)), (2, 3), np.float32),
    ("normal", lambda k: random.normal(k, (4,)), (4,), np.float32),
    ("randint", lambda k: random.randint(k, (3,), 0, 9), (3,), np.int32),
    ("bernoulli", lambda k: random.bernoulli(k, 0.5, (2, 2)), (2, 2), np.bool_),
    ("gumbel", lambda k: random.gumbel(k, (3,)), (3,), np.float32),
    ("exponential", lambda k: random.exponential(k, (3,)), (3,), np.float32),
    ("categorical", lambda k: random.categorical(k, jnp.zeros((2, 5))), (2,), np.int32),
    ("truncated_normal", lambda k: random.truncated_normal(k, -1.0, 1.0, (3,)), (3,), np.float32),
    ("choice", lambda k: random.choice(k, 7, (3,)), (3,), np.int32),
    ("permutation", lambda k: random.permutation(k, jnp.arange(6)), (6,), np.int32),
    ("bits", lambda k: random.bits(k, (3,)), (3,), np.uint32),
    ("split", lambda k: random.split(k, 4), (4, 2), np.uint32),
    ("fold_in", lambda k: random.fold_in(k, 5), (2,), np.uint32),
    ("multivariate_normal", lambda k: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)),
     (2,), np.float32),
]


@pytest.mark.parametrize("name,fn,shape,dtype", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_shape_dtype_jit_vmap(name, fn, shape, dtype):
    eager = fn(K42)
    assert eager.shape == shape and eager.dtype == dtype
    # jit == eager bitwise.
    jitted = jax.jit(fn)(jnp.asarray(K42))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(eager))
    # vmap over a batch of keys == a loop.
    keys = random.split(K42, 5)
    batched = np.asarray(jax.vmap(fn)(keys))
    looped = np.stack([np.asarray(fn(keys[i])) for i in range(5)])
    np.testing.assert_array_equal(batched, looped)


def test_vmap_normal_over_split_keys():
    keys = random.split(random.PRNGKey(0), 5)
    out = jax.vmap(lambda k: random.normal(k, (3,)))(keys)
    assert out.shape == (5, 3)
    for i in range(5):
        np.testing.assert_array_equal(np.asarray(out[i]), np.asarray(random.normal(keys[i], (3,))))
    outj = jax.jit(jax.vmap(lambda k: random.normal(k, (3,))))(keys)
    np.testing.assert_array_equal(np.asarray(outj), np.asarray(out))


def test_grad_through_random_draws():
    k = random.PRNGKey(3)

    def f(mu, sigma):
        return jnp.sum(mu + sigma * random.normal(k, (5,)))

    z = np.asarray(random.normal(k, (5,)), np.float64)
    g_mu, g_sigma = jax.grad(f, argnums=(0, 1))(1.0, 2.0)
    assert float(g_mu) == pytest.approx(5.0)
    assert float(g_sigma) == pytest.approx(z.sum(), rel=1e-5)
    gj = jax.jit(jax.grad(f, argnums=1))(1.0, 2.0)
    assert float(gj) == pytest.approx(z.sum(), rel=1e-5)

    def g(lo):
        return jnp.sum(random.uniform(k, (4,), minval=lo, maxval=3.0))

    u = np_uniform32(np.asarray(k), (4,))
    assert float(jax.grad(g)(1.0)) == pytest.approx(float(np.sum(1 - u)), rel=1e-5)


def test_grad_wrt_key_is_an_error():
    with pytest.raises(TypeError, match="grad requires real"):
        jax.grad(lambda k: jnp.sum(random.normal(k, (2,))))(random.PRNGKey(0))
    with pytest.raises(TypeError, match="grad requires real"):
        jax.grad(lambda k: jnp.sum(random.normal(k, (2,))))(random.key(0))


def test_shape_and_dtype_errors():
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype"):
        random.uniform(K42, (2,), dtype="int32")
    with pytest.raises(ValueError, match="dtype argument to `normal` must be a float"):
        random.normal(K42, dtype="int32")
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        random.randint(K42, (2,), 0, 3, dtype="float32")
    with pytest.raises(ValueError, match="randint parameter shapes must be broadcast-compatible"):
        random.randint(K42, (3,), jnp.zeros((2, 3), "int32"), 5)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        random.randint(K42, (2,), jnp.zeros(3, "int32"), 5)
    with pytest.raises(ValueError, match="bernoulli parameter shapes must be broadcast"):
        random.bernoulli(K42, jnp.full((2, 3), 0.5), (3,))
    with pytest.raises(TypeError, match="bernoulli probability `p` must have a floating dtype"):
        random.bernoulli(K42, jnp.asarray(1))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
        random.uniform(K42, (2.5,))


# ----------------------------------------------------------------------------
# Against JAX itself, when it is installed (an optional extra; skipped otherwise)


def test_against_installed_jax():
    real = pytest.importorskip("jax")
    rk = real.random.PRNGKey(42)
    np.testing.assert_array_equal(np.asarray(real.random.split(rk, 3)),
                                  np.asarray(random.split(K42, 3)))
    np.testing.assert_array_equal(np.asarray(real.random.fold_in(rk, 7)),
                                  np.asarray(random.fold_in(K42, 7)))
    np.testing.assert_array_equal(np.asarray(real.random.bits(rk, (9,))),
                                  np.asarray(random.bits(K42, (9,))))
    np.testing.assert_array_equal(np.asarray(real.random.uniform(rk, (2, 5))),
                                  np.asarray(random.uniform(K42, (2, 5))))
    np.testing.assert_array_equal(np.asarray(real.random.randint(rk, (7,), -3, 11)),
                                  np.asarray(random.randint(K42, (7,), -3, 11)))
    np.testing.assert_array_equal(np.asarray(real.random.permutation(rk, 20)),
                                  np.asarray(random.permutation(K42, 20)))
    np.testing.assert_allclose(np.asarray(real.random.normal(rk, (50,))),
                               np.asarray(random.normal(K42, (50,))), rtol=1e-6, atol=1e-7)


def test_grad_matches_finite_differences(x64):
    k = random.PRNGKey(3)

    def f(lo):
        t = random.truncated_normal(k, lo, 2.0, (4,), dtype=jnp.float64)
        u = random.uniform(k, (4,), dtype=jnp.float64, minval=lo, maxval=3.0)
        return jnp.sum(t * t) + jnp.sum(u * u * u)

    eps = 1e-5
    for x in (-1.0, -0.3):
        fd1 = (float(f(x + eps)) - float(f(x - eps))) / (2 * eps)
        assert float(jax.grad(f)(x)) == pytest.approx(fd1, rel=1e-6)
        g = jax.grad(f)
        fd2 = (float(g(x + eps)) - float(g(x - eps))) / (2 * eps)
        assert float(jax.grad(jax.grad(f))(x)) == pytest.approx(fd2, rel=1e-5)
