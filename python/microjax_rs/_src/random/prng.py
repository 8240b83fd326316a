"""`jax._src.random.prng` at JAX's path: the registered implementations
(`prngs`, `PRNGImpl`, `register_prng`), the key array type and its dtype
(`PRNGKeyArray`, `KeyTy`), and the key operations as functions of typed key
arrays (`random_seed`, `random_split`, `random_fold_in`, `random_bits`,
`random_wrap`, `random_unwrap`)."""
from ...random import _prng
from ...random._prng import (  # noqa: F401
    KeyDType as KeyTy,
    PRNGImpl,
    PRNGKeyArray,
    prngs,
    register_prng,
)

UINT_DTYPES = dict(_prng._UINT)


def _typed(name, keys):
    if not isinstance(keys, PRNGKeyArray):
        raise TypeError(f"{name} takes key array operand, got {keys!r}")
    return keys


def random_seed(seeds, impl):
    """A typed key of `impl` from an integer scalar seed."""
    return PRNGKeyArray(impl, impl.seed(seeds))


def random_split(keys, shape):
    """Keys of shape `keys.shape + shape`, split from each key."""
    return _prng._split_data(_typed("random_split", keys), tuple(shape))


def random_fold_in(keys, msgs):
    """Each key folded with the uint32 scalar `msgs`."""
    return _prng._fold_in_data(_typed("random_fold_in", keys), msgs)


def random_bits(keys, bit_width, shape):
    """Random bits of `bit_width` and `shape` from each key (of shape
    `keys.shape + shape`)."""
    if bit_width not in UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    return _prng._random_bits(_typed("random_bits", keys), bit_width, tuple(shape))


def random_wrap(base_arr, *, impl):
    """Typed keys of `impl` over uint32 key data."""
    return _prng.wrap_key_data(base_arr, impl=impl)


def random_unwrap(keys):
    """The uint32 data of typed keys."""
    return _typed("random_unwrap", keys)._base
