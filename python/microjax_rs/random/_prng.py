"""`jax.random`'s keys, the PRNG implementation registry, JAX's default
PRNG (Threefry-2x32) bit for bit, bits and the basic samplers.

Keys are either raw `uint32[..., *key_shape]` arrays (`PRNGKey`) or typed key
arrays (`key`), a `PRNGKeyArray` of one implementation (`PRNGImpl`: its key
shape, seed, split, fold_in and random_bits) whose one pytree leaf is the raw
data, so typed keys pass through `jit`, `vmap` and `grad` like any pytree
(`jax.tree.map` still hands a key array whole to its function, as JAX). Raw
keys are read as keys of the default implementation (`jax_default_prng_impl`).
The samplers draw through `_split_data`, `_fold_in_data` and `_random_bits`,
whatever the implementation; Threefry follows JAX's current defaults
(`jax_threefry_partitionable=True`: counters are the row-major element index
as a 64-bit number split into two words); the older scheme is kept behind
that flag, as in JAX. The other implementations are in `_impls`.
"""
import math
import operator
import typing
import warnings
from collections.abc import Sequence

import numpy as np

from .. import core, dtypes, lax
from .. import numpy as jnp
from ..config import config
from ..core import Primitive
from ..errors import ConcretizationTypeError
from ..tree_util import _register_array_node, register_pytree_node
from .._src import key_reuse as _key_reuse
from .._src.tables import HALF_FLOAT_NAMES, ITEMSIZES, KINDS, MANTISSA_BITS

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits", "uniform",
    "normal", "randint", "bernoulli", "categorical", "choice", "permutation", "shuffle",
    "truncated_normal", "gumbel", "exponential", "multivariate_normal", "threefry2x32_p",
    "threefry_2x32", "PRNGKeyArray", "key_impl", "rademacher",
]

threefry2x32_p = Primitive("threefry2x32")

# Bits -> the unsigned dtype of that width, from Rust's dtype table.
_UINT = {8 * ITEMSIZES[name]: name for name, kind in KINDS.items() if kind == "u"}
# (bits, explicit mantissa bits) of each real float dtype, from Rust's dtype table.
_FLOAT_BITS = {name: (8 * ITEMSIZES[name], mant) for name, mant in MANTISSA_BITS.items()}


# ----------------------------------------------------------------------------
# PRNG implementations and typed keys


class PRNGImpl(typing.NamedTuple):
    """One PRNG implementation (JAX's `prng.PRNGImpl`): the shape of one key's
    uint32 data and the functions on the data of one key: `seed(seed)` (an
    integer scalar), `split(data, shape)`,
    `random_bits(data, bit_width, shape)` and `fold_in(data, uint32 scalar)`."""

    key_shape: tuple
    seed: typing.Callable
    split: typing.Callable
    random_bits: typing.Callable
    fold_in: typing.Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self):
        return hash(self.tag)

    def __str__(self):
        return self.name

    def pprint(self):
        return f"PRNGImpl[{self.name}]"


prngs = {}


def register_prng(impl):
    """Adds `impl` to the implementations `key(seed, impl=name)` accepts."""
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


def default_prng_impl():
    """The implementation named by `jax_default_prng_impl`."""
    return prngs[config.read("jax_default_prng_impl")]


def _resolve_impl(impl):
    """The `PRNGImpl` named / given by `impl` (None: the default one)."""
    if impl is None:
        return default_prng_impl()
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, KeyDType):
        return impl._impl
    if isinstance(impl, PRNGSpec):
        return impl._impl
    if isinstance(impl, str):
        if impl in prngs:
            return prngs[impl]
        names = ", ".join(f'"{n}"' for n in prngs)
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: {names}?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


class KeyDType:
    """The dtype of typed keys of one implementation (`key<fry>`, `key<rbg>`, ...)."""

    type = dtypes.prng_key
    kind = "V"

    def __init__(self, impl):
        self._impl = impl

    @property
    def name(self):
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self):
        return 4 * math.prod(self._impl.key_shape)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType) and other._impl.name == self._impl.name

    def __hash__(self):
        return hash(self.name)


class PRNGKeyArray:
    """A typed key array of implementation `impl`: shape
    `data.shape[:-len(impl.key_shape)]`, dtype `key<tag>`."""

    # `_consumed`: the key-reuse flags (None until `jax_debug_key_reuse`
    # tracks the keys; _src/key_reuse.py).
    __slots__ = ("_impl", "_base", "_consumed")

    def __init__(self, impl, base):
        self._impl = impl
        self._base = base
        self._consumed = None

    def _wrap(self, base):
        return PRNGKeyArray(self._impl, base)

    @property
    def _trail(self):
        return len(self._impl.key_shape)

    @property
    def shape(self):
        return tuple(jnp.shape(self._base)[:jnp.ndim(self._base) - self._trail])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def dtype(self):
        return KeyDType(self._impl)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.itemsize * self.size

    @property
    def _base_array(self):
        return self._base

    # Placement and lifetime are the data's.
    device = property(operator.attrgetter("_base.device"))
    sharding = property(operator.attrgetter("_base.sharding"))

    def devices(self):
        return self._base.devices()

    def on_device_size_in_bytes(self):
        return self._base.on_device_size_in_bytes()

    def delete(self):
        self._base.delete()

    def is_deleted(self):
        return self._base.is_deleted()

    def copy_to_host_async(self):
        """Host arrays are already on the host: nothing to start."""
        return None

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            n_ell = sum(i is Ellipsis for i in idx)
            if n_ell > 1:
                raise IndexError("an index can only have a single ellipsis ('...')")
            used = sum(i is not None and i is not Ellipsis for i in idx)
            at = next(j for j, i in enumerate(idx) if i is Ellipsis)
            idx = idx[:at] + (slice(None),) * max(self.ndim - used, 0) + idx[at + 1:]
        used = sum(i is not None for i in idx)
        if used > self.ndim:
            raise IndexError(f"Too many indices: {self.ndim}-dimensional array indexed with "
                             f"{used} regular indices.")
        idx = idx + (slice(None),) * (self.ndim - used)
        out = self._wrap(self._base[idx + (slice(None),) * self._trail])
        if _key_reuse.enabled():
            return _key_reuse.index(self, idx, out)
        return out

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(len(self)))

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(d) for d in shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        return self._wrap(jnp.reshape(self._base, shape + self._impl.key_shape))

    def ravel(self, order="C"):
        return self.reshape((self.size,))

    flatten = ravel

    def squeeze(self, axis=None):
        shape = self.shape
        axes = tuple(i for i, d in enumerate(shape) if d == 1) if axis is None else \
            tuple(a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,)))
        return self._wrap(jnp.squeeze(self._base, axes))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = axes or tuple(reversed(range(self.ndim)))
        tail = tuple(range(self.ndim, self.ndim + self._trail))
        return self._wrap(jnp.transpose(self._base, tuple(a % self.ndim for a in axes) + tail))

    @property
    def T(self):
        return self.transpose()

    @property
    def at(self):
        from ._keyops import KeyAt

        return KeyAt(self)

    def copy(self):
        return self._wrap(jnp.array(self._base, copy=True))

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __eq__(self, other):
        return _key_compare(self, other, jnp.equal)

    def __ne__(self, other):
        return _key_compare(self, other, jnp.not_equal)

    # Arithmetic on keys raises JAX's TypeError ("add does not accept dtypes key<fry>, int32.").
    def __add__(self, other):
        return jnp.add(self, other)

    def __radd__(self, other):
        return jnp.add(other, self)

    def __sub__(self, other):
        return jnp.subtract(self, other)

    def __rsub__(self, other):
        return jnp.subtract(other, self)

    def __mul__(self, other):
        return jnp.multiply(self, other)

    def __rmul__(self, other):
        return jnp.multiply(other, self)

    def __neg__(self):
        return jnp.negative(self)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    def __repr__(self):
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base}"


def _key_compare(x, y, op):
    """`keys == keys` / `!=`: elementwise over the key shape (all words equal)."""
    if not (_is_typed(x) and _is_typed(y)) or x._impl.name != y._impl.name:
        raise TypeError(f"{op.__name__} does not accept dtypes {_dtype_text(x)}, {_dtype_text(y)}.")
    axes = tuple(range(-x._trail, 0))
    eq = jnp.all(jnp.equal(x._base, y._base), axis=axes)
    return eq if op is jnp.equal else jnp.logical_not(eq)


def _dtype_text(x):
    return str(x.dtype) if hasattr(x, "dtype") else type(x).__name__


register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), k._impl),
                     lambda impl, xs: PRNGKeyArray(impl, xs[0]))
_register_array_node(PRNGKeyArray)
_key_reuse.KEY_TYPES = (PRNGKeyArray,)


def _is_typed(k):
    return isinstance(k, PRNGKeyArray)


def _check_key_data(data, impl):
    """JAX's checks of raw key data of `impl` (`random_wrap`)."""
    shape = tuple(jnp.shape(data))
    kshape = impl.key_shape
    if len(shape) < len(kshape):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= "
                        f"{len(kshape)}; got ndim={len(shape)}")
    if shape[len(shape) - len(kshape):] != kshape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                        f"with {kshape}; got shape={shape} for impl={impl.name}")
    name = core.get_aval(data).dtype_name
    if name != "uint32":
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={name}")


def _legacy_key_check(k):
    mode = config.read("jax_legacy_prng_key")
    if mode == "allow":
        return
    msg = ("Legacy uint32 key array passed as key to jax.random function. Please create keys "
           "using jax.random.key(). If use of a raw key array was intended, set "
           "jax_legacy_prng_key=\"allow\".")
    if mode == "warn":
        warnings.warn(msg, UserWarning, stacklevel=3)
    elif mode == "error":
        raise ValueError(msg)


def _check_prng_key(name, k, allow_batched=False):
    """A typed key array of `k` (typed keys as they are; raw data wrapped with
    the default implementation) and whether `k` was raw."""
    if _is_typed(k):
        key, raw = k, False
    elif isinstance(k, (core.ArrayImpl, core.Tracer, np.ndarray, np.generic, list, tuple)):
        data = jnp.asarray(k)
        impl = default_prng_impl()
        _check_key_data(data, impl)
        _legacy_key_check(k)
        key, raw = PRNGKeyArray(impl, data), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(k)}")
    if key.shape and not allow_batched:
        raise TypeError(f"{name} accepts a single key, but was given a key array of shape "
                        f"{key.shape} != (). Use jax.vmap for batching.")
    if not raw and _key_reuse.enabled():
        if name not in _key_reuse.NOT_CONSUMING:
            _key_reuse.consume(key, "random_split" if name == "split" else "jit")
        # The function's own uses of the key do not count again.
        key = _key_reuse.fresh(key)
    return key, raw


def _return_keys(raw, key):
    return key._base if raw else key


# ----------------------------------------------------------------------------
# Key operations of any implementation (JAX's `random_split`, `random_fold_in`,
# `random_bits`): batched keys map over their leading axes.


def _map_keys(key, fn):
    """`fn(data of one key)` for every key of `key` (vmapped over its shape)."""
    if not key.shape:
        return fn(key._base)
    from .._vmap import vmap

    flat = jnp.reshape(key._base, (key.size,) + key._impl.key_shape)
    out = vmap(fn)(flat)
    return jnp.reshape(out, key.shape + tuple(jnp.shape(out)[1:]))


def _split_data(key, shape):
    """Keys of `shape` split from each key of `key`."""
    return key._wrap(_map_keys(key, lambda d: key._impl.split(d, shape)))


def _fold_in_data(key, x):
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        x = np.uint32(int(x) & 0xFFFFFFFF)
    x = lax.convert_element_type(jnp.asarray(x), "uint32")
    return key._wrap(_map_keys(key, lambda d: key._impl.fold_in(d, x)))


def _random_bits(key, bit_width, shape):
    """Uniform random bits of `bit_width` (8/16/32/64) and `shape` from each
    key of `key`."""
    return _map_keys(key, lambda d: key._impl.random_bits(d, bit_width, shape))


# ----------------------------------------------------------------------------
# Threefry-2x32 (JAX's default implementation)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of every element of the uint32 array `count`,
    pairing the first half of its elements with the second (JAX's
    `threefry_2x32`: an odd count is padded with one zero)."""
    k0, k1 = keypair[0], keypair[1]
    count = jnp.asarray(count)
    names = [core.get_aval(jnp.asarray(x)).dtype_name for x in (k0, k1, count)]
    if any(n != "uint32" for n in names):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {names}")
    flat = jnp.ravel(count)
    n = jnp.shape(flat)[0]
    if n % 2:
        flat = jnp.concatenate([flat, jnp.zeros((1,), "uint32")])
    half = jnp.shape(flat)[0] // 2
    y0, y1 = threefry2x32_p.bind(jnp.asarray(k0), jnp.asarray(k1), flat[:half], flat[half:])
    out = jnp.concatenate([y0, y1])
    return jnp.reshape(out[:n], jnp.shape(count))


def _iota_2x32(shape):
    """Row-major element index of `shape` as (high word, low word)."""
    size = math.prod(shape)
    if size > 2 ** 32:
        raise NotImplementedError("random bits array of size exceeding 2 ** 32")
    lo = jnp.reshape(lax.iota("uint32", size), shape)
    return jnp.zeros(shape, "uint32"), lo


def _hash_shape(data, shape):
    k0, k1 = data[0], data[1]
    hi, lo = _iota_2x32(shape)
    return threefry2x32_p.bind(k0, k1, hi, lo)


def _threefry_split(data, shape):
    if config.read("jax_threefry_partitionable"):
        b0, b1 = _hash_shape(data, shape)
        return jnp.stack([b0, b1], axis=len(shape))
    num = math.prod(shape)
    counts = lax.iota("uint32", num * 2)
    return jnp.reshape(threefry_2x32(data, counts), (*shape, 2))


def _threefry_fold_in(data, x):
    # JAX hashes the seed key (0, x) of `x` as a count array.
    return threefry_2x32(data, jnp.stack([jnp.zeros((), "uint32"), x]))


def _threefry_random_bits(data, bit_width, shape):
    """Threefry bits (JAX's `threefry_random_bits`)."""
    dtype = _UINT[bit_width]
    if config.read("jax_threefry_partitionable"):
        b0, b1 = _hash_shape(data, shape)
        if bit_width == 64:
            hi = lax.convert_element_type(b0, dtype)
            lo = lax.convert_element_type(b1, dtype)
            return lax.bitwise_or(lax.shift_left(hi, jnp.asarray(32, dtype)), lo)
        out = lax.bitwise_xor(b0, b1)
        return out if bit_width == 32 else lax.convert_element_type(out, dtype)
    return _random_bits_original(data, bit_width, shape)


def _random_bits_original(data, bit_width, shape):
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    if max_count >= np.iinfo(np.uint32).max:
        raise NotImplementedError("random bits arrays this large need the partitionable scheme")
    words = threefry_2x32(data, lax.iota("uint32", max_count))
    dtype = _UINT[bit_width]
    if bit_width == 64:
        hi, lo = (lax.convert_element_type(w, dtype) for w in jnp.split(words, 2))
        words = lax.bitwise_or(lax.shift_left(hi, jnp.asarray(32, dtype)), lo)
    elif bit_width in (8, 16):
        # Each word holds 32 // bit_width values, lowest bits first.
        per = 32 // bit_width
        shifts = jnp.asarray(np.arange(per, dtype=np.uint32) * bit_width)
        parts = lax.shift_right_logical(jnp.reshape(words, (max_count, 1)),
                                        jnp.broadcast_to(shifts, (max_count, per)))
        parts = lax.bitwise_and(parts, jnp.asarray(np.iinfo(dtype).max, "uint32"))
        words = lax.convert_element_type(jnp.ravel(parts), dtype)[:size]
    return jnp.reshape(words, shape)


register_prng(PRNGImpl(
    key_shape=(2,), seed=lambda seed: _seed_words(seed, "key"), split=_threefry_split,
    random_bits=_threefry_random_bits, fold_in=_threefry_fold_in, name="threefry2x32", tag="fry"))


# ----------------------------------------------------------------------------
# Keys


def _seed_words(seed, name):
    """(high, low) uint32 words of an integer seed, as JAX's `threefry_seed`:
    64-bit seeds (under x64) keep their high word; 32-bit ones get zero."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if config.read("jax_enable_x64"):
            s = int(np.int64(seed)) if not isinstance(seed, np.unsignedinteger) else int(seed)
            s &= 0xFFFFFFFFFFFFFFFF
            return jnp.asarray(np.array([s >> 32, s & 0xFFFFFFFF], np.uint32))
        s = int(np.int64(seed)) & 0xFFFFFFFF if not isinstance(seed, np.unsignedinteger) \
            else int(seed) & 0xFFFFFFFF
        return jnp.asarray(np.array([0, s], np.uint32))
    seed = jnp.asarray(seed)
    if jnp.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{jnp.shape(seed)} != (). Use jax.vmap for batching")
    dname = core.get_aval(seed).dtype_name
    if not dtypes.is_int_name(dname):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    width = np.dtype(dname).itemsize * 8
    if width == 64:
        hi = lax.convert_element_type(
            lax.shift_right_logical(seed, jnp.asarray(32, dname)), "uint32")
    else:
        hi = jnp.zeros((), "uint32")
    lo = lax.convert_element_type(seed, "uint32")
    return jnp.stack([hi, lo])


def _check_seed(seed, name):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key")
    if np.ndim(seed) if not isinstance(seed, (core.ArrayImpl, core.Tracer)) else jnp.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{jnp.shape(seed)} != (). Use jax.vmap for batching")


def _impl_of(impl, dtype):
    """The implementation of `key(..., impl=, dtype=)` (at most one given)."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype`.")
    if dtype is not None:
        if isinstance(dtype, KeyDType):
            return dtype._impl
        if isinstance(dtype, str) and dtype in prngs:
            return prngs[dtype]
        raise TypeError(f"dtype={dtype!r} is not a PRNG key dtype")
    return _resolve_impl(impl)


def PRNGKey(seed, *, impl=None):
    """A raw (legacy) PRNG key: the ``uint32`` key data of ``key(seed, impl=impl)``.

    For the default Threefry implementation that is the pair ``(0, seed)`` (a 64-bit seed under
    x64 keeps its high word). Prefer ``key``, whose typed keys cannot be mixed up with data.

    Example:
      >>> import microjax_rs as jax
      >>> jax.random.PRNGKey(42)
      Array([ 0, 42], dtype=uint32)
    """
    impl = _resolve_impl(impl)
    _check_seed(seed, "PRNGKey")
    return impl.seed(_offset_seed(seed))


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key of shape ``()`` from an integer ``seed``.

    Args:
      seed: a Python or array integer.
      impl: the PRNG implementation (default Threefry, dtype ``key<fry>``; see ``random.key_impl``).
      dtype: a key dtype, an alternative way to name the implementation.

    Keys are consumed, not advanced: derive new ones with ``split`` or ``fold_in`` and pass one
    key to each sampler. Draws are bit-identical to JAX's for the same key.

    Example:
      >>> import microjax_rs as jax
      >>> key = jax.random.key(0)
      >>> key.shape, key.dtype
      ((), key<fry>)
    """
    impl = _impl_of(impl, dtype)
    _check_seed(seed, "key")
    return PRNGKeyArray(impl, impl.seed(_offset_seed(seed)))


def _offset_seed(seed):
    offset = config.read("jax_random_seed_offset")
    if not offset:
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return int(seed) + offset
    return jnp.asarray(seed) + offset


def key_data(keys):
    """The raw `uint32[..., *key_shape]` data of typed (or raw) keys."""
    key, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return key._base


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over raw key data `uint32[..., *key_shape]`."""
    impl = _impl_of(impl, dtype)
    if _is_typed(key_bits_array):
        raise TypeError("wrap_key_data accepts only uint32 key data, got a typed key array")
    data = jnp.asarray(key_bits_array)
    _check_key_data(data, impl)
    return PRNGKeyArray(impl, data)


def key_impl(keys):
    """The name of the implementation of `keys` (typed; raw keys: the default)."""
    key, _ = _check_prng_key("key_impl", keys, allow_batched=True)
    return PRNGSpec(key._impl)


class PRNGSpec(str):
    """The implementation `key_impl` names: a string of its name that also
    gives the `PRNGImpl` (`key(0, impl=key_impl(k))`)."""

    def __new__(cls, impl):
        self = super().__new__(cls, impl.name)
        self._impl = impl
        return self


def split(key, num=2):
    """New, independent keys derived from ``key``: ``num`` of them (an int, stacked along a new
    leading axis) or an array of keys of shape ``num`` (a tuple). Typed keys give typed keys and
    raw keys give raw key data.

    Example:
      >>> import microjax_rs as jax
      >>> key, subkey = jax.random.split(jax.random.key(0))
      >>> jax.random.split(key, 3).shape
      (3,)
    """
    key, raw = _check_prng_key("split", key)
    shape = tuple(operator.index(n) for n in num) if isinstance(num, Sequence) \
        else (operator.index(num),)
    return _return_keys(raw, _split_data(key, shape))


def fold_in(key, data):
    """A new key from `key` and the integer `data`."""
    key, raw = _check_prng_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, (core.ArrayImpl, core.Tracer)) else jnp.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {jnp.shape(data)} != (). Use jax.vmap for batching.")
    return _return_keys(raw, _fold_in_data(key, data))


def _split2(data):
    ks = _split_data(data, (2,))
    return ks[0], ks[1]


# ----------------------------------------------------------------------------
# Samplers (JAX's `random.py`)


def _canonical_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        try:
            shape_ = tuple(np.broadcast_shapes(shape, *param_shapes))
        except ValueError:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                             f"{[shape, *param_shapes]}") from None
        if shape != shape_:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {shape_} for shape argument "
                             f"{shape}.")


def _float_dtype(name, dtype):
    dname = dtypes.dtype_name(dtype)
    if not dtypes.is_float_name(dname):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dname}")
    return dtypes.canonical_name(dname)


def bits(key, shape=(), dtype=None):
    """Uniform random unsigned integers (default uint32, uint64 under x64)."""
    data, _ = _check_prng_key("bits", key)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "bits")
    dname = dtypes.canonical_name(dtypes.dtype_name(dtype if dtype is not None else "uint64"))
    if not dname.startswith("uint"):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dname}")
    return _random_bits(data, np.dtype(dname).itemsize * 8, _canonical_shape(shape))


def uniform(key, shape=(), dtype=float, minval=0., maxval=1.):
    """Samples uniform in ``[minval, maxval)``.

    Args:
      key: a PRNG key (typed or raw).
      shape: the sample shape.
      dtype: a float dtype (default: the default float dtype).
      minval, maxval: the bounds; arrays broadcast with ``shape``.

    Example:
      >>> import microjax_rs as jax
      >>> jax.random.uniform(jax.random.key(1), (2,))
      Array([0.4386325, 0.5337529], dtype=float32)
    """
    data, _ = _check_prng_key("uniform", key)
    dname = _float_dtype("uniform", dtype)
    return _uniform(data, _canonical_shape(shape), dname, minval, maxval)


def _uniform(data, shape, dname, minval, maxval):
    minval = lax.convert_element_type(minval, dname)
    maxval = lax.convert_element_type(maxval, dname)
    nbits, nmant = _FLOAT_BITS[dname]
    rng_bits = nbits if nmant >= 8 else 8
    words = _random_bits(data, rng_bits, shape)
    if rng_bits != nbits:
        words = lax.convert_element_type(words, _UINT[nbits])
    # JAX sets the exponent of 1.0 under the top `nmant` bits and subtracts 1:
    # exactly the integer mantissa times 2**-nmant, computed here without a bitcast.
    mant = lax.shift_right_logical(words, jnp.asarray(rng_bits - nmant, _UINT[nbits]))
    floats = lax.mul(lax.convert_element_type(mant, dname), jnp.asarray(2.0 ** -nmant, dname))
    out = jnp.reshape(_scale_shift(floats, maxval - minval, minval, dname), shape)
    return jnp.maximum(minval, out)


def _scale_shift(floats, span, shift, dname):
    """`floats * span + shift` rounded once, as XLA's fused multiply-add on CPU
    (exact products, such as a power-of-two span, need no fusing)."""
    plain = False
    if not isinstance(span, core.Tracer):
        s = np.asarray(span, np.float64)
        plain = bool(np.all((s != 0) & (np.frexp(np.abs(s))[0] == 0.5)))
    # (bfloat16 arithmetic is rounded after each operation, float16's after
    # the fused float32 multiply-add: what JAX's CPU backend gives.)
    if plain or dname == "bfloat16":
        return floats * span + shift
    if dname == "float16":
        wide = _fma(floats.astype("float32"), jnp.broadcast_to(span, jnp.shape(floats))
                    .astype("float32"), jnp.broadcast_to(shift, jnp.shape(floats)).astype("float32"))
        return wide.astype(dname)
    return _fma(floats, jnp.broadcast_to(span, jnp.shape(floats)),
                jnp.broadcast_to(shift, jnp.shape(floats)))


def normal(key, shape=(), dtype=float):
    """Samples from the standard normal distribution (mean 0, variance 1).

    Args:
      key: a PRNG key (typed or raw).
      shape: the sample shape.
      dtype: a float or complex dtype (default: the default float dtype). A complex sample
        has independent real and imaginary parts, each of variance 1/2 (drawn with the two
        halves of ``split(key)``), so its expected squared modulus is 1, as JAX.

    Computed as ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1), with the polynomial for
    ``erf_inv`` that XLA uses, so draws match JAX's.

    Example:
      >>> import microjax_rs as jax
      >>> jax.random.normal(jax.random.key(0), (3,))
      Array([ 1.6226422 ,  2.0252647 , -0.43359444], dtype=float32)
    """
    data, _ = _check_prng_key("normal", key)
    name = dtypes.dtype_name(float if dtype is None else dtype)
    if dtypes.is_complex_name(name):
        cname = dtypes.canonical_name(name)
        real = dtypes.real_dtype_name(cname)
        k_re, k_im = _split2(data)
        shape = _canonical_shape(shape)
        z = lax.complex(_normal(k_re, shape, real), _normal(k_im, shape, real))
        return lax.div(z, lax.convert_element_type(jnp.asarray(np.sqrt(2), real), cname))
    dname = dtypes.dtype_name(float if dtype is None else dtype)
    if not dtypes.is_float_name(dname):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dname}")
    dname = dtypes.canonical_name(dname)
    return _normal(data, _canonical_shape(shape), dname)


def _normal(data, shape, dname):
    npd = dtypes.np_dtype(dname)
    lo = np.nextafter(np.array(-1.0, npd), np.array(0.0, npd))
    u = _uniform(data, shape, dname, jnp.asarray(lo, dname), 1.0)
    return lax.mul(jnp.asarray(np.sqrt(2), dname), _erf_inv(u))


# Giles' polynomial approximations of erf_inv ("Approximating the erfinv
# function", GPU Computing Gems, 2011) in the variable w = -log1p(-x * x), the
# form JAX's default XLA backend evaluates; normal draws built on it land on
# JAX's values to a few ulp (the correctly rounded `lax.erf_inv` differs from
# them by up to ~60 ulp in float32). Highest-degree coefficient first.
_ERF_INV_F32 = (
    (5.0, 2.5, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)),
    (np.inf, 3.0, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                   0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)),
)
_ERF_INV_F64 = (
    (6.25, 3.125, (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, 3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)),
)


def _split_float(a, dname):
    """Veltkamp's split of `a` into a high half and a low half."""
    factor = jnp.asarray(2.0 ** 27 + 1 if dname == "float64" else 2.0 ** 12 + 1, dname)
    c = lax.mul(factor, a)
    hi = lax.sub(c, lax.sub(c, a))
    return hi, lax.sub(a, hi)


def _fma(a, b, c):
    """`a * b + c` with one rounding (to within rare double-rounding ties), by
    the error-free product and sum: XLA contracts the polynomial steps of its
    special functions into fused multiply-adds on CPU, and draws that follow
    them bit for bit need the same rounding."""
    dname = core.get_aval(a).dtype_name
    prod = lax.mul(a, b)
    ah, al = _split_float(a, dname)
    bh, bl = _split_float(b, dname)
    prod_err = lax.add(lax.add(lax.add(lax.sub(lax.mul(ah, bh), prod), lax.mul(ah, bl)),
                               lax.mul(al, bh)), lax.mul(al, bl))
    total = lax.add(prod, c)
    bb = lax.sub(total, prod)
    sum_err = lax.add(lax.sub(prod, lax.sub(total, bb)), lax.sub(c, bb))
    fused = lax.add(total, lax.add(sum_err, prod_err))
    # The rounding correction is exact (Sterbenz) and carries no derivative.
    return lax.add(total, lax.stop_gradient(lax.sub(fused, total)))


# The float32 rational approximation of erf that JAX's XLA backend lowers to:
# x * P(x**2) / Q(x**2) on x clamped to +-3.8325 (beyond which erf rounds to +-1).
_ERF_F32_NUM = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
                0.18520832239976145, 1.128379143519084)
_ERF_F32_DEN = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
                0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)
_ERF_F32_CLAMP = 3.832506856900711


def _with_value(exact, value):
    """`value` carrying the derivatives of `exact` (the two are within a few
    ulp of each other, so the correction `value - exact` is exact)."""
    return lax.add(exact, lax.stop_gradient(lax.sub(value, exact)))


def _erf(x):
    """erf with JAX's values (float32: its rational form; float64: `lax.erf`)
    and `lax.erf`'s derivatives."""
    dname = core.get_aval(x).dtype_name
    if dname == "float64":
        return lax.erf(x)
    if dname != "float32":
        return lax.convert_element_type(_erf(lax.convert_element_type(x, "float32")), dname)
    return _with_value(lax.erf(x), _erf_f32_value(lax.stop_gradient(x)))


def _erf_f32_value(x):
    dname = "float32"
    x = jnp.clip(x, jnp.asarray(-_ERF_F32_CLAMP, dname), jnp.asarray(_ERF_F32_CLAMP, dname))
    z = lax.mul(x, x)

    def horner(coeffs):
        p = jnp.full(jnp.shape(z), coeffs[0], dname)
        for c in coeffs[1:]:
            p = _fma(p, z, jnp.asarray(c, dname))
        return p

    return lax.div(lax.mul(x, horner(_ERF_F32_NUM)), horner(_ERF_F32_DEN))


def _erf_inv(x):
    """erf_inv with JAX's values (Giles' piecewise polynomials; float16 and
    bfloat16 through float32) and `lax.erf_inv`'s derivatives."""
    dname = core.get_aval(x).dtype_name
    if dname in HALF_FLOAT_NAMES:
        return lax.convert_element_type(_erf_inv(lax.convert_element_type(x, "float32")), dname)
    exact = lax.erf_inv(x)
    value = _erf_inv_value(lax.stop_gradient(x), dname)
    # +-1 (infinite) and |x| > 1 (NaN) are lax.erf_inv's own.
    return jnp.where(lax.abs(lax.stop_gradient(x)) < jnp.asarray(1.0, dname),
                     _with_value(exact, value), exact)


def _erf_inv_value(x, dname):
    pieces = _ERF_INV_F64 if dname == "float64" else _ERF_INV_F32
    w = lax.neg(lax.log1p(lax.neg(lax.mul(x, x))))
    sqrt_w = lax.sqrt(w)
    # Each piece covers w below its bound (and above the previous one's); the
    # first works in w, the others in sqrt(w).
    below = [w < jnp.asarray(bound, dname) for bound, _, _ in pieces[:-1]]

    def pick(values):
        out = jnp.asarray(values[-1], dname)
        for cond, v in zip(reversed(below), reversed(values[:-1])):
            out = jnp.where(cond, jnp.asarray(v, dname), out)
        return out

    shifts = [shift for _, shift, _ in pieces]
    t = lax.sub(jnp.where(below[0], w, sqrt_w), pick(shifts))
    # Horner's rule from the highest degree; a shorter polynomial gets leading
    # zero coefficients (0 * t + c is exactly c).
    degree = max(len(c) for _, _, c in pieces)
    padded = [(0.0,) * (degree - len(c)) + tuple(c) for _, _, c in pieces]
    p = pick([c[0] for c in padded])
    for i in range(1, degree):
        p = _fma(p, t, pick([c[i] for c in padded]))
    return lax.mul(p, x)



def _int_dtype_name(dtype):
    return dtypes.canonical_name(dtypes.dtype_name(dtype))


def _convert_and_clip_integer(val, dname):
    vname = core.get_aval(val).dtype_name
    if vname != dname:
        vi, di = np.iinfo(vname), np.iinfo(dname)
        lo, hi = max(vi.min, di.min), min(vi.max, di.max)
        val = jnp.clip(val, jnp.asarray(lo, vname), jnp.asarray(hi, vname))
    return lax.convert_element_type(val, dname)


def randint(key, shape, minval, maxval, dtype=int):
    """Uniform integers in `[minval, maxval)` (JAX's double-width remainder)."""
    data, _ = _check_prng_key("randint", key)
    shape = _canonical_shape(shape)
    dname = _int_dtype_name(dtype)
    if not dtypes.is_int_name(dname):
        raise TypeError(f"randint only accepts integer dtypes, got {dname}")
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    info = np.iinfo(dname)
    if info.bits < 32:
        # As JAX: 8- and 16-bit integers are drawn as int32 (less modulo bias)
        # from bounds clipped to the dtype's range, then cast.
        lo = jnp.clip(jnp.asarray(minval).astype("int32"), int(info.min), int(info.max))
        hi = jnp.clip(jnp.asarray(maxval).astype("int32"), int(info.min), int(info.max) + 1)
        return _randint(data, shape, lo, hi, "int32").astype(dname)
    return _randint(data, shape, minval, maxval, dname)


def _randint(data, shape, minval, maxval, dname):
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.is_int_name(core.get_aval(minval).dtype_name):
        minval = minval.astype(int)
    if not dtypes.is_int_name(core.get_aval(maxval).dtype_name):
        maxval = maxval.astype(int)
    mname = core.get_aval(maxval).dtype_name
    top = _convert_and_clip_integer(jnp.asarray(np.iinfo(dname).max, dname), mname)
    maxval_out_of_range = maxval > top
    minval = _convert_and_clip_integer(minval, dname)
    maxval = _convert_and_clip_integer(maxval, dname)
    nbits = np.iinfo(dname).bits
    uname = _UINT[nbits]
    k1, k2 = _split2(data)
    higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    span = lax.convert_element_type(maxval - minval, uname)
    one = jnp.asarray(1, uname)
    span = jnp.where(maxval <= minval, one, span)
    span = jnp.where(maxval_out_of_range & (maxval > minval), span + one, span)
    # (hi * 2**nbits + lo) % span, with 2**nbits % span = (2**(nbits/2) % span)**2 % span.
    span, higher, lower = jnp.broadcast_arrays(span, higher, lower)
    multiplier = lax.rem(jnp.full(jnp.shape(span), 2 ** (nbits // 2), uname), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return minval + lax.convert_element_type(offset, dname)


def bernoulli(key, p=np.float32(0.5), shape=None, mode="low"):
    """Booleans that are True with probability `p`; `mode='high'` compares
    two uniforms' worth of bits (accurate for tiny `p`)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = _check_prng_key("bernoulli", key)
    p = jnp.asarray(p) if not isinstance(p, float) else p
    pname = dtypes.canonical_name(
        dtypes.default_float_name() if isinstance(p, float) else core.get_aval(p).dtype_name)
    if not dtypes.is_float_name(pname):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {pname}.")
    p = lax.convert_element_type(p, pname)
    if shape is None:
        shape = jnp.shape(p)
    else:
        shape = _canonical_shape(shape)
        _check_shape("bernoulli", shape, jnp.shape(p))
    if mode == "high":
        u = _uniform(data, (2, *shape), pname, 0.0, 1.0)
        u1, u2 = u[0], u[1] * jnp.asarray(2.0 ** -_FLOAT_BITS[pname][1], pname)
        return u2 < p - u1
    return _uniform(data, shape, pname, 0.0, 1.0) < p


def rademacher(key, shape=(), dtype=int):
    """-1 or +1 with equal probability (`2 * bernoulli(key, 0.5, shape) - 1`, as JAX)."""
    _check_prng_key("rademacher", key)
    dname = dtypes.canonical_name(dtypes.dtype_name(dtype))
    b = bernoulli(key, 0.5, _canonical_shape(shape)).astype(dname)
    return (2 * b - 1).astype(dname)


def gumbel(key, shape=(), dtype=float, mode=None):
    """Standard Gumbel floats: `-log(-log(u))`; `mode='high'` / `'highest'`
    spend more random bits on the upper tail (as JAX)."""
    data, _ = _check_prng_key("gumbel", key)
    dname = _float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(data, _canonical_shape(shape), dname, mode)


def _gumbel(data, shape, dname, mode="low"):
    tiny = jnp.finfo(dname).tiny
    if dname == "float32" and mode == "highest":
        return _gumbel_highest(data, shape)
    if mode in ("high", "highest"):
        u = _uniform(data, (2, *shape), dname, 0.0, 1.0)
        high, low = u[0], u[1]
        nmant = _FLOAT_BITS[dname][1]
        x = jnp.where(high >= 0.5, high,
                      high + jnp.asarray(2.0 ** -nmant, dname) * low + jnp.asarray(tiny, dname))
        return -jnp.log(-jnp.log1p(-x))
    u = _uniform(data, shape, dname, jnp.asarray(tiny, dname), 1.0)
    return -jnp.log(-jnp.log(u))


def _bits_pair_to_float32(hi, lo):
    """The 64-bit fraction `(hi, lo) / 2**64` rounded down to a float32 (all
    leading zeros become exponent)."""
    u32 = lambda v: jnp.asarray(np.uint32(v))
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    hi_zero = hiclz == u32(32)
    mant = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(hi_zero, lax.shift_left(lo, loclz),
                  lax.shift_right_logical(lo, lax.sub(u32(32), hiclz))))
    mant = lax.bitwise_and(lax.shift_right_logical(mant, u32(8)), u32((1 << 23) - 1))
    lead = jnp.where(hi_zero, lax.add(u32(32), loclz), hiclz)
    exp = lax.shift_left(lax.sub(u32(126), lead), u32(23))
    exp = lax.bitwise_and(exp, u32((1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mant), "float32")


def _gumbel_highest(data, shape):
    bits = _random_bits(data, 32, (2, *shape))
    neg = lax.bitwise_not(bits)
    lo_bits = neg[1]
    carry = (lo_bits == jnp.asarray(np.uint32(0xFFFFFFFF))).astype("uint32")
    neg = neg + jnp.stack([carry, jnp.ones_like(lo_bits)])
    flip = bits[0] < jnp.asarray(np.uint32(1 << 31))
    pair = jnp.where(flip, bits, neg)
    x = _bits_pair_to_float32(pair[0], pair[1])
    return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def exponential(key, shape=(), dtype=float):
    """Standard exponential floats: `-log1p(-u)`."""
    data, _ = _check_prng_key("exponential", key)
    dname = _float_dtype("exponential", dtype)
    u = _uniform(data, _canonical_shape(shape), dname, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn from `softmax(logits, axis)` (Gumbel-max; without
    replacement the top-k of the perturbed logits)."""
    data, _ = _check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    lshape = jnp.shape(logits)
    if axis >= 0:
        axis -= len(lshape)
    batch_shape = tuple(np.delete(np.array(lshape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    dname = core.get_aval(logits).dtype_name
    if not replace:
        perturbed = logits + _gumbel(data, lshape, dname, mode)
        k = math.prod(prefix)
        if k > lshape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({lshape[axis]}).")
        _, idx = lax.top_k(jnp.moveaxis(perturbed, axis, -1), k)
        # (..batch, k) -> (k-shaped prefix, ..batch)
        return jnp.reshape(jnp.moveaxis(idx, -1, 0), shape)
    gshape = list(shape[len(shape) - len(batch_shape):])
    gshape.insert(axis % len(lshape), lshape[axis])
    g = _gumbel(data, (*prefix, *gshape), dname, mode)
    expanded = jnp.reshape(logits, (1,) * len(prefix) + lshape)
    return jnp.argmax(g + expanded, axis=axis)


def truncated_normal(key, lower, upper, shape=None, dtype=float):
    """Standard normal floats conditioned on `lower < x < upper`."""
    data, _ = _check_prng_key("truncated_normal", key)
    dname = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(jnp.shape(lower), jnp.shape(upper)))
    else:
        shape = _canonical_shape(shape)
        _check_shape("truncated_normal", shape, jnp.shape(lower), jnp.shape(upper))
    sqrt2 = jnp.asarray(np.sqrt(2), dname)
    lower = lax.convert_element_type(lower, dname)
    upper = lax.convert_element_type(upper, dname)
    a = _erf(lower / sqrt2)
    b = _erf(upper / sqrt2)
    u = _uniform(data, shape, dname, a, b)
    out = sqrt2 * _erf_inv(u)
    inf = jnp.asarray(np.inf, dname)
    lo = lax.nextafter(lax.stop_gradient(lower), inf)
    hi = lax.nextafter(lax.stop_gradient(upper), -inf)
    return jnp.clip(out, lo, hi)


def _take_along(x, idx, axis):
    """`x` reordered along `axis` by `idx` (same shape as `x`), one row at a time."""
    from .._vmap import vmap
    xm, im = jnp.moveaxis(x, axis, -1), jnp.moveaxis(idx, axis, -1)
    lead = jnp.shape(xm)[:-1]
    n = jnp.shape(xm)[-1]
    rows = vmap(lambda r, i: jnp.take(r, i))(jnp.reshape(xm, (-1, n)), jnp.reshape(im, (-1, n)))
    return jnp.moveaxis(jnp.reshape(rows, (*lead, n)), -1, axis)


def _shuffle(data, x, axis):
    # JAX sorts by fresh random 32-bit keys, enough rounds that all keys are
    # distinct with high probability; a stable argsort reproduces its order.
    x = jnp.asarray(x)
    size = int(np.prod(jnp.shape(x)))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = _split2(data)
        sort_keys = _random_bits(sub, 32, jnp.shape(x))
        order = jnp.argsort(sort_keys, axis=axis, stable=True)
        x = jnp.take(x, order, axis=0) if jnp.ndim(x) == 1 else _take_along(x, order, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of `arange(x)` or of `x` along `axis`."""
    data, _ = _check_prng_key("permutation", key)
    if isinstance(x, (int, np.integer)) or not jnp.ndim(x):
        xa = jnp.asarray(x)
        if not dtypes.is_int_name(core.get_aval(xa).dtype_name):
            raise TypeError("x must be an integer or at least 1-dimensional")
        if isinstance(x, core.Tracer):
            raise ConcretizationTypeError(
                "argument x of jax.random.permutation() must be a concrete integer")
        return _shuffle(data, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    ndim = jnp.ndim(x)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis %= ndim
    if independent or ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(jnp.shape(x)[axis]), 0)
    return jnp.take(x, ind, axis=axis)


def shuffle(key, x, axis=0):
    """Deprecated in JAX: `permutation(key, x, axis, independent=True)`."""
    warnings.warn("jax.random.shuffle is deprecated and will be removed in a future release. "
                  "Use jax.random.permutation with independent=True.", FutureWarning,
                  stacklevel=2)
    data, _ = _check_prng_key("shuffle", key)
    return _shuffle(data, x, axis % max(jnp.ndim(x), 1))


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """A random sample of `a` (or `arange(a)`)."""
    data, raw = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, "
                        f"got {shape}")
    shape = _canonical_shape(shape)
    arr = jnp.asarray(a)
    if jnp.ndim(arr) == 0:
        if isinstance(a, core.Tracer):
            raise ConcretizationTypeError("argument a of jax.random.choice() must be a concrete "
                                          "integer. The error occurred in jax.random.choice()")
        n_inputs = int(a)
    else:
        axis %= jnp.ndim(arr)
        n_inputs = jnp.shape(arr)[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=core.get_aval(arr).dtype_name)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than "
                         f"population (size {n_inputs}) when 'replace=False'")
    k = _return_keys(raw, data)
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
            result = ind if jnp.ndim(arr) == 0 else jnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(k, n_inputs if jnp.ndim(arr) == 0 else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=axis if jnp.ndim(arr) else 0)
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.is_float_name(core.get_aval(p_arr).dtype_name):
            p_arr = p_arr.astype(float)
        if jnp.shape(p_arr) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {jnp.shape(p_arr)} and a.shape[axis] is {n_inputs}.")
        pname = core.get_aval(p_arr).dtype_name
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - _uniform(data, shape, pname, 0.0, 1.0))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = -_gumbel(data, (n_inputs,), pname) - jnp.log(p_arr)
            ind = jnp.argsort(g)[:n_draws]
        result = ind if jnp.ndim(arr) == 0 else jnp.take(arr, ind, axis=axis)
    out_shape = shape if jnp.ndim(arr) == 0 else \
        jnp.shape(arr)[:axis] + tuple(shape) + jnp.shape(arr)[axis + 1:]
    return jnp.reshape(result, out_shape)


def _cholesky(a):
    """Lower Cholesky factor of the last two axes (unrolled; small n only)."""
    n = jnp.shape(a)[-1]
    cols = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[..., i, j]
            for k in range(j):
                s = s - cols[i][k] * cols[j][k]
            cols[i][j] = jnp.sqrt(s) if i == j else s / cols[j][j]
    zero = jnp.zeros_like(a[..., 0, 0])
    rows = [jnp.stack([cols[i][j] if j <= i else zero for j in range(n)], axis=-1)
            for i in range(n)]
    return jnp.stack(rows, axis=-2)


def _as_common_float(x, y):
    """`x` and `y` as arrays of their promoted dtype (the default float where that is not
    a float), and that dtype's name."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    name = dtypes.promote([(core.get_aval(x).dtype_name, False), (core.get_aval(y).dtype_name, False)])[0]
    if not dtypes.is_float_name(name):
        name = dtypes.default_float_name()
    return x.astype(name), y.astype(name), name


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """`mean + L @ z`, `L` the Cholesky factor of `cov` (method 'cholesky' only)."""
    data, _ = _check_prng_key("multivariate_normal", key)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if method != "cholesky":
        raise NotImplementedError(f"multivariate_normal(method={method!r}) needs jnp.linalg."
                                  f"{method}, which microjax_rs does not have yet")
    mean, cov, name = _as_common_float(mean, cov)
    dname = name if dtype is None else _float_dtype("multivariate_normal", dtype)
    if jnp.ndim(mean) < 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{jnp.ndim(mean)}")
    if jnp.ndim(cov) < 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{jnp.ndim(cov)}")
    n = jnp.shape(mean)[-1]
    if jnp.shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {jnp.shape(cov)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(jnp.shape(mean)[:-1], jnp.shape(cov)[:-2]))
    else:
        shape = _canonical_shape(shape)
        _check_shape("normal", shape, jnp.shape(mean)[:-1], jnp.shape(cov)[:-2])
    factor = _cholesky(cov)
    z = _normal(data, shape + (n,), dname)
    # factor @ z over the last axes, broadcasting the batch axes.
    return mean + jnp.sum(factor * jnp.expand_dims(z, -2), axis=-1)

