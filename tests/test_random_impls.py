"""jax.random's PRNG implementations other than the default (threefry4x32,
philox2x32, philox4x32, rbg, unsafe_rbg) and the implementation machinery:
`key(seed, impl=...)`, `PRNGKey(seed, impl=...)`, `jax.default_prng_impl`,
key dtypes, typed keys of each implementation under jit and vmap, and the
uint8 / uint16 / uint64 bits of `lax.rng_bit_generator` the rbg pair uses.
Every value below was recorded from JAX 0.10.2 on the CPU."""
import json
import os
import warnings

import numpy as np
import pytest

import microjax_rs as jax
import microjax_rs.numpy as jnp
from microjax_rs import lax, random
from microjax_rs._src import config as src_config
from microjax_rs._src.random import prng as prng_internal

IMPLS = ["threefry2x32", "threefry4x32", "philox2x32", "philox4x32", "rbg", "unsafe_rbg"]
KEY_SHAPES = {"threefry2x32": (2,), "threefry4x32": (4,), "philox2x32": (1,), "philox4x32": (2,),
              "rbg": (4,), "unsafe_rbg": (4,)}
TAGS = {"threefry2x32": "fry", "threefry4x32": "fry4", "philox2x32": "phx2", "philox4x32": "phx4",
        "rbg": "rbg", "unsafe_rbg": "urbg"}

# Recorded from JAX 0.10.2 (CPU), by implementation name:
# - "keys": for key(42, impl=name): its data, split(k, 3), split(k, (2, 2)),
#   fold_in(k, 1234567), bits of (5,) uint8 / uint16 and (2, 3) uint32,
#   uniform (4,), normal (4,), randint (6,) in [0, 10), and key(-5) data;
# - "bits64": bits(key(7), (3,), uint64) with x64; "seed64": key(2**40 + 3) data;
# - "distributions": for key(7, impl=name): gamma(0.8, (3,)), beta(0.8, 0.9, (3,)),
#   permutation(6), choice(10, (3,), replace=False), categorical([0.1, 0.5, 1.0], shape=(4,)),
#   truncated_normal(-1, 1, (3,)), bernoulli(0.3, (5,)), binomial(10, 0.3, (3,)),
#   dirichlet([0.5, 0.6, 0.7]);
# and "rbg_bits", by dtype: [state, bits] of lax.rng_bit_generator.
with open(os.path.join(os.path.dirname(__file__), "random_impls_jax_values.json")) as _f:
    _JAX = json.load(_f)
RECORDED, BITS64, SEED64 = _JAX["keys"], _JAX["bits64"], _JAX["seed64"]
RBG_BITS, DISTRIBUTIONS = _JAX["rbg_bits"], _JAX["distributions"]


def _data(k):
    return np.asarray(random.key_data(k)).tolist()


@pytest.mark.parametrize("impl", IMPLS)
def test_key_split_fold_in_match_jax(impl):
    rec = RECORDED[impl]
    k = random.key(42, impl=impl)
    assert _data(k) == rec["key"]
    assert _data(random.split(k, 3)) == rec["split"]
    assert _data(random.split(k, (2, 2))) == rec["split22"]
    assert _data(random.fold_in(k, 1234567)) == rec["fold_in"]
    assert _data(random.key(-5, impl=impl)) == rec["seed_neg"]


@pytest.mark.parametrize("impl", IMPLS)
def test_bits_and_samplers_match_jax(impl):
    rec = RECORDED[impl]
    k = random.key(42, impl=impl)
    for name, shape, dtype in (("bits8", (5,), "uint8"), ("bits16", (5,), "uint16"),
                               ("bits32", (2, 3), "uint32")):
        out = random.bits(k, shape, dtype)
        assert out.dtype == np.dtype(dtype)
        assert np.asarray(out).tolist() == rec[name]
    np.testing.assert_allclose(np.asarray(random.uniform(k, (4,))), rec["uniform"], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(random.normal(k, (4,))), rec["normal"], rtol=1e-5)
    assert np.asarray(random.randint(k, (6,), 0, 10)).tolist() == rec["randint"]


@pytest.mark.parametrize("impl", IMPLS)
def test_64_bit_bits_and_seeds_match_jax(impl):
    with jax.enable_x64(True):
        out = random.bits(random.key(7, impl=impl), (3,), "uint64")
        assert out.dtype == np.dtype("uint64")
        assert np.asarray(out).tolist() == BITS64[impl]
        assert _data(random.key(2 ** 40 + 3, impl=impl)) == SEED64[impl]


@pytest.mark.parametrize("impl", IMPLS)
def test_raw_keys_and_default_impl(impl):
    raw = random.PRNGKey(42, impl=impl)
    assert raw.dtype == np.dtype("uint32") and raw.shape == KEY_SHAPES[impl]
    assert np.asarray(raw).tolist() == RECORDED[impl]["key"]
    with jax.default_prng_impl(impl):
        assert prng_internal.prngs[impl] is jax._src.random.default_prng_impl()
        # Raw keys are read as keys of the default implementation.
        assert np.asarray(random.split(raw, 3)).tolist() == RECORDED[impl]["split"]
        assert np.asarray(random.bits(raw, (5,), "uint8")).tolist() == RECORDED[impl]["bits8"]
        typed = random.key(42)
        assert typed._impl is prng_internal.prngs[impl]
    assert random.key(0)._impl.name == "threefry2x32"


@pytest.mark.parametrize("impl", IMPLS)
def test_key_dtype_shape_and_impl(impl):
    k = random.key(1, impl=impl)
    assert str(k.dtype) == f"key<{TAGS[impl]}>"
    assert k.dtype == random.key_dtype(impl)
    assert k.dtype != random.key_dtype("threefry2x32" if impl != "threefry2x32" else "rbg")
    assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert k.itemsize == 4 * int(np.prod(KEY_SHAPES[impl]))
    assert random.key_impl(k) == impl
    ks = random.split(k, (2, 3))
    assert ks.shape == (2, 3)
    assert random.key_data(ks).shape == (2, 3) + KEY_SHAPES[impl]
    assert _data(ks[1, 2]) == _data(random.split(k, (2, 3)).reshape(6)[5])
    assert _data(ks.T[2, 1]) == _data(ks[1, 2])
    wrapped = random.wrap_key_data(random.key_data(ks), impl=impl)
    assert wrapped.dtype == k.dtype and _data(wrapped) == _data(ks)
    assert _data(random.wrap_key_data(random.key_data(k), dtype=k.dtype)) == _data(k)
    assert _data(random.key(1, dtype=impl)) == _data(k)


@pytest.mark.parametrize("impl", IMPLS)
def test_typed_keys_under_jit_and_vmap(impl):
    k = random.key(42, impl=impl)
    split = jax.jit(lambda key: random.split(key, 3))(k)
    assert split.dtype == k.dtype and _data(split) == RECORDED[impl]["split"]
    bits = jax.jit(lambda key: random.bits(key, (5,), "uint16"))(k)
    assert np.asarray(bits).tolist() == RECORDED[impl]["bits16"]
    keys = random.split(k, 3)
    per_key = jax.vmap(lambda key: random.bits(key, (5,), "uint8"))(keys)
    assert per_key.shape == (3, 5)
    for i in range(3):
        assert np.asarray(per_key[i]).tolist() == np.asarray(random.bits(keys[i], (5,), "uint8")).tolist()
    folded = jax.vmap(lambda key: random.fold_in(key, 1234567))(random.split(k, 2))
    assert _data(folded[1]) == _data(random.fold_in(random.split(k, 2)[1], 1234567))


def test_bad_implementations_and_key_data():
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key(0, impl="philox")
    with pytest.raises(TypeError, match="unrecognized type"):
        random.key(0, impl=3)
    with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
        random.key(0, impl="rbg", dtype=random.key_dtype("rbg"))
    with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
        random.wrap_key_data(jnp.zeros(4, "uint32"), impl="rbg", dtype="rbg")
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(4,\\)"):
        random.wrap_key_data(jnp.zeros(2, "uint32"), impl="rbg")
    with pytest.raises(ValueError, match="Invalid value"):
        jax.config.update("jax_default_prng_impl", "philox")
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(1,\\)"):
        with jax.default_prng_impl("philox2x32"):
            random.uniform(jnp.zeros(2, "uint32"))


def test_legacy_prng_key_modes():
    raw = jnp.zeros(2, "uint32")
    with jax.legacy_prng_key("warn"):
        with pytest.warns(UserWarning, match="Legacy uint32 key array"):
            random.uniform(raw)
    with jax.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array"):
            random.uniform(raw)
        with pytest.raises(TypeError, match="JAX encountered invalid PRNG key data"):
            random.uniform(jnp.zeros(1, "float32"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        random.uniform(raw)


def test_random_seed_offset_changes_keys():
    with src_config.random_seed_offset(3):
        shifted = _data(random.key(17))
    assert shifted == _data(random.key(20))


def test_rng_bit_generator_narrow_and_wide_bits_match_jax():
    k = np.array([1, 2, 0xFFFFFFFF, 4], np.uint32)
    for dtype in ("uint8", "uint16"):
        state, bits = lax.rng_bit_generator(k, (5,), dtype=dtype)
        assert bits.dtype == np.dtype(dtype)
        assert [np.asarray(state).tolist(), np.asarray(bits).tolist()] == RBG_BITS[dtype]
    with jax.enable_x64(True):
        state, bits = lax.rng_bit_generator(k, (3,), dtype="uint64")
        assert bits.dtype == np.dtype("uint64")
        assert [np.asarray(state).tolist(), np.asarray(bits).tolist()] == RBG_BITS["uint64"]


# -- typed key arrays through jnp / lax functions (JAX's key arrays behave as arrays of keys)


def _keys(impl="threefry2x32", n=4):
    return random.split(random.key(123, impl=impl), n)


@pytest.mark.parametrize("impl", ["threefry2x32", "philox2x32", "rbg"])
def test_shape_functions_of_keys_act_on_each_key(impl):
    keys = _keys(impl)
    data = random.key_data(keys)
    kshape = KEY_SHAPES[impl]
    cases = [
        (lambda k: jnp.reshape(k, (2, 2)), lambda d: jnp.reshape(d, (2, 2) + kshape)),
        (jnp.ravel, lambda d: d),
        (lambda k: jnp.tile(k[0], 3), lambda d: jnp.tile(d[0][None], (3,) + (1,) * len(kshape))),
        (lambda k: jnp.broadcast_to(k[1], (3,)), lambda d: jnp.broadcast_to(d[1], (3,) + kshape)),
        (lambda k: jnp.expand_dims(k, 0), lambda d: d[None]),
        (lambda k: jnp.concatenate([k, k[:2]]), lambda d: jnp.concatenate([d, d[:2]])),
        (lambda k: jnp.stack([k[0], k[3]]), lambda d: jnp.stack([d[0], d[3]])),
        (lambda k: jnp.append(k, k[0]), lambda d: jnp.concatenate([d, d[:1]])),
        (lambda k: k[np.array([False, True, True, False])], lambda d: d[1:3]),
        (lambda k: k.at[np.array([0, 2])].get(), lambda d: d[np.array([0, 2])]),
        (lambda k: k.at[1:3].set(k[0]), lambda d: d.at[1:3].set(d[0])),
        (lambda k: jnp.where(np.array([True, False, True, False]), k, k[::-1]),
         lambda d: jnp.where(np.array([True, False, True, False])[:, None], d, d[::-1])),
        (lambda k: lax.select(np.array([True, False, True, False]), k, k[::-1]),
         lambda d: jnp.where(np.array([True, False, True, False])[:, None], d, d[::-1])),
        (lambda k: lax.slice_in_dim(k, 1, 3), lambda d: d[1:3]),
        (lambda k: lax.dynamic_slice_in_dim(k, np.int16(1), 2), lambda d: d[1:3]),
        (lambda k: lax.dynamic_update_slice_in_dim(k, k[:1], 2, 0), lambda d: d.at[2].set(d[0])),
        (lambda k: jnp.full_like(k, random.key(42, impl=impl)),
         lambda d: jnp.broadcast_to(random.key_data(random.key(42, impl=impl)), d.shape)),
        (lambda k: jnp.zeros_like(k), jnp.zeros_like),
        (lambda k: jnp.asarray(k), lambda d: d),
        (lambda k: jnp.array(k, dtype=k.dtype), lambda d: d),
    ]
    for key_fn, data_fn in cases:
        for fn in (key_fn, jax.jit(key_fn)):
            out = fn(keys)
            assert isinstance(out, prng_internal.PRNGKeyArray) and out.dtype == keys.dtype
            np.testing.assert_array_equal(np.asarray(random.key_data(out)), np.asarray(data_fn(data)))


def test_keys_made_by_creation_functions_of_a_key_dtype():
    dtype = random.key_dtype("rbg")
    zeros = jnp.zeros((3,), dtype=dtype)
    assert zeros.dtype == dtype and zeros.shape == (3,)
    assert np.asarray(random.key_data(zeros)).tolist() == [[0] * 4] * 3
    full = jnp.full((2,), random.key(5, impl="rbg"), dtype=dtype)
    assert _data(full) == [_data(random.key(5, impl="rbg"))] * 2
    assert _data(jnp.full((2,), 7, dtype=dtype)) == [[7] * 4] * 2
    assert jnp.result_type(zeros) == dtype
    # (jnp.full of an array fill value broadcasts it, for plain dtypes too)
    np.testing.assert_array_equal(np.asarray(jnp.full((2, 2), jnp.array([0, 42], "uint32"), dtype="uint32")),
                                  [[0, 42], [0, 42]])


def test_key_equality_and_errors():
    key, other = random.key(123), random.key(456)
    assert bool(key == key) and not bool(key == other) and bool(key != other)
    arr = random.split(key, 5).at[2:4].set(key)
    np.testing.assert_array_equal(np.asarray(key == arr), [False, False, True, True, False])
    with pytest.raises(TypeError, match="cannot mix typed PRNG key arrays"):
        jnp.concatenate([random.split(key, 2), jnp.zeros((2, 2), "uint32")])
    with pytest.raises(TypeError, match="cannot combine PRNG keys of implementations"):
        jnp.stack([key, random.key(0, impl="rbg")])
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(key)
    with pytest.raises(TypeError, match="unhashable type"):
        hash(key)
    with pytest.raises(IndexError, match="Too many indices"):
        key[0]
    assert random.split(key, 6).reshape(2, 3)[None, 0, ..., 1, None].shape == (1, 1)


def test_tree_map_sees_a_key_array_as_one_leaf():
    keys = _keys()
    unwrap = lambda x: random.key_data(x) if isinstance(x, prng_internal.PRNGKeyArray) else x
    mapped = jax.tree.map(unwrap, {"k": keys, "x": 1.0})
    assert mapped["x"] == 1.0
    assert not isinstance(mapped["k"], prng_internal.PRNGKeyArray)
    np.testing.assert_array_equal(np.asarray(mapped["k"]), np.asarray(random.key_data(keys)))
    assert jax.tree.map(lambda k: k.shape, (keys,)) == ((4,),)
    # Transformations still carry keys through as their data.
    assert jax.jit(lambda k: k)(keys).dtype == keys.dtype
    assert _data(jax.device_put(keys)) == _data(keys)


def test_key_array_attributes():
    keys = _keys("philox4x32", 3)
    assert isinstance(keys, jax.Array)
    assert keys.nbytes == keys._base_array.nbytes == keys.itemsize * keys.size == 24
    assert keys.device == keys._base_array.device
    assert keys.copy_to_host_async() is None
    assert _data(keys.block_until_ready()) == _data(keys.copy())
    assert jnp.issubdtype(keys.dtype, keys.dtype) and jnp.issubdtype(keys.dtype, np.generic)
    assert jnp.issubdtype(keys.dtype, jax.dtypes.extended)
    assert not jnp.issubdtype(keys.dtype, np.integer) and not jnp.issubdtype(keys.dtype, np.number)
    with pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match="Could not convert"):
            jnp.issubdtype(keys, jax.dtypes.prng_key)
    assert not keys.is_deleted()
    keys.delete()
    assert keys.is_deleted() and keys._base_array.is_deleted()


def test_private_prng_functions_match_the_public_ones():
    impl = prng_internal.prngs["threefry4x32"]
    k = prng_internal.random_seed(42, impl)
    assert _data(k) == RECORDED["threefry4x32"]["key"]
    assert _data(prng_internal.random_split(k, (3,))) == RECORDED["threefry4x32"]["split"]
    assert np.asarray(prng_internal.random_bits(k, 8, (5,))).tolist() == RECORDED["threefry4x32"]["bits8"]
    keys = jax.vmap(lambda d: prng_internal.random_wrap(d, impl=impl), in_axes=1)(jnp.zeros((4, 3), "uint32"))
    assert keys.shape == (3,) and keys.dtype == random.key_dtype("threefry4x32")
    assert prng_internal.random_unwrap(keys).shape == (3, 4)
    with pytest.raises(TypeError, match="random_unwrap takes key array operand"):
        prng_internal.random_unwrap(jnp.zeros((3, 4), "uint32"))


def test_explicit_x64_dtypes_modes_of_bits():
    key = random.key(0)
    with pytest.warns(UserWarning, match="Explicitly requested dtype uint64"):
        assert random.bits(key, (3,), "uint64").dtype == np.dtype("uint32")
    with src_config.explicit_x64_dtypes(src_config.ExplicitX64Mode.ERROR):
        with pytest.raises(ValueError, match="Explicitly requested dtype uint64"):
            random.bits(key, (3,), "uint64")


def test_count_of_jit_cache_misses():
    from microjax_rs._src import test_util as jtu

    f = jax.jit(lambda k: random.normal(k))
    key = _keys()[0]
    with jtu.count_pjit_cpp_cache_miss() as count:
        f(key).block_until_ready()
        f(key).block_until_ready()
    assert count() == 1




@pytest.mark.parametrize("impl", sorted(DISTRIBUTIONS))
def test_samplers_of_every_implementation_match_jax(impl):
    rec = DISTRIBUTIONS[impl]
    k = random.key(7, impl=impl)
    draws = {
        "gamma": random.gamma(k, 0.8, (3,)),
        "beta": random.beta(k, 0.8, 0.9, (3,)),
        "permutation": random.permutation(k, 6),
        "choice": random.choice(k, 10, (3,), replace=False),
        "categorical": random.categorical(k, jnp.array([0.1, 0.5, 1.0]), shape=(4,)),
        "truncated_normal": random.truncated_normal(k, -1.0, 1.0, (3,)),
        "bernoulli": random.bernoulli(k, 0.3, (5,)),
        "binomial": random.binomial(k, 10, 0.3, (3,)),
        "dirichlet": random.dirichlet(k, jnp.array([0.5, 0.6, 0.7])),
    }
    for name, value in draws.items():
        np.testing.assert_allclose(np.asarray(value, dtype=float), np.asarray(rec[name], dtype=float),
                                   rtol=1e-5, atol=1e-6, err_msg=name)


def test_poisson_is_threefry_only():
    with pytest.raises(NotImplementedError, match="only implemented for the threefry2x32 RNG, not rbg"):
        random.poisson(random.key(0, impl="rbg"), 3.0)


def test_arithmetic_and_conversion_of_keys_raise_jax_errors():
    key = random.key(123)
    for fn in (lambda: jnp.add(key, 1), lambda: key + 1):
        with pytest.raises(TypeError, match=r"^add does not accept dtypes key<fry>, int32\.$"):
            fn()
    for fn in (lambda: jnp.add(key, key), lambda: key + key):
        with pytest.raises(TypeError, match=r"^add does not accept dtype key<fry>\.$"):
            fn()
    for fn in (lambda: jnp.negative(key), lambda: -key):
        with pytest.raises(TypeError, match=r"^neg does not accept dtype key<fry>\.$"):
            fn()
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to int32"):
        lax.convert_element_type(key, int)
    with pytest.raises(ValueError, match="Cannot convert_element_type from int32 to key<fry>"):
        lax.convert_element_type(np.int32(0), key.dtype)
